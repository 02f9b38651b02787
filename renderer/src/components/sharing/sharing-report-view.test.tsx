/**
 * A sharing check run on exo, in the page's report: experiments 1 and 2 shown once
 * with exobar's hold on and once off (a column and a chart each), and experiment 4's
 * decode beside an idle neighbour. The result is the real-MLX report kept in docs/,
 * turned into an exo one (target, hold runs, experiment 4) through the shared schema.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cleanup, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { SharingCheckResultSchema, type SharingCheckResult } from '../../../../shared/sharing-check';
import { SharingReportView } from './sharing-report-view';

afterEach(cleanup);

function exoResult(): SharingCheckResult {
  const real = SharingCheckResultSchema.parse(JSON.parse(readFileSync(join(process.cwd(), 'docs', 'sharing-check-real-mlx.json'), 'utf8')));
  if (!real.ttft.ran || !real.decode.ran) throw new Error('the kept report ran experiments 1 and 2');
  const ttftOn = { ...real.ttft, hold: true, bWhileAPrefillsWithQueuedS: 0.31 };
  const ttftOff = { ...real.ttft, hold: false, bWhileAPrefillsWithQueuedS: 15.4 };
  const decodeRuns = real.decode.runs.map((run, i) => ({ ...run, policy: null, hold: i === 0 }));
  const span = { tokens: 64, decodeTokensPerSecond: 40, itlP50Ms: 25, itlP95Ms: 30 };
  return SharingCheckResultSchema.parse({
    ...real,
    target: { kind: 'exo', node: 'http://127.0.0.1:52415' },
    ttft: { ...ttftOn, ran: true, runs: [ttftOn, ttftOff] },
    decode: { ...real.decode, ...decodeRuns[0], runs: decodeRuns, prefillCostRatio: null },
    idleNeighbour: { ran: true, resident: { ...span, decodeTokensPerSecond: 20 }, unloaded: span, decodeRatio: 0.5, itlP95Ratio: 2, how: 'deleted' },
  });
}

describe('a sharing check on exo in the page', () => {
  it('shows experiments 1 and 2 with the hold on and off, and the idle neighbour', () => {
    render(<SharingReportView result={exoResult()} markdown="# report" />);
    expect(screen.getByTestId('sharing-exo').textContent).toMatch(/through exobar's proxy/);
    const ttft = screen.getByTestId('sharing-ttft');
    expect(within(ttft).getByRole('columnheader', { name: 'hold on' })).toBeTruthy();
    expect(within(ttft).getByRole('columnheader', { name: 'hold off' })).toBeTruthy();
    const queued = within(ttft)
      .getByText(/one .* request queued/)
      .closest('tr')!;
    expect(queued.textContent).toContain('0.31 s');
    expect(queued.textContent).toContain('15.40 s');
    const runs = screen.getAllByTestId('sharing-run');
    expect(runs.map((r) => r.getAttribute('data-hold'))).toEqual(['true', 'false']);
    expect(runs[0]!.textContent).toMatch(/^Hold on:/);
    expect(runs[1]!.textContent).toMatch(/^Hold off:/);
    expect(screen.getByTestId('sharing-idle-neighbour').textContent).toMatch(/20\.0 tok\/s with .* resident and idle, 40\.0 tok\/s with .* unloaded: 50 %/);
  });
});
