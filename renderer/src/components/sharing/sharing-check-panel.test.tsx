/**
 * "Check GPU sharing" in the page: the settings go to the node, the step and progress
 * show while the check runs, Cancel cancels it, and the finished report shows with its
 * chart per policy and its figures. The report is the real-MLX one kept in docs/ (as
 * the node wrote it), read through the shared schema.
 */
import { formatDateTime } from '../../../../shared/time-words';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { act, cleanup, fireEvent, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { SharingCheckResultSchema, type SharingCheckResult } from '../../../../shared/sharing-check';
import { runningCheck as running } from '../../../../test/support/checks/check-status';
import { snapshot } from '../../../../test/support/renderer/fixtures';
import { renderApp } from '../../../../test/support/renderer/render-app';

afterEach(cleanup);

// vitest runs from the repository's root (jsdom gives import.meta.url no file path).
const REAL_MLX = join(process.cwd(), 'docs', 'sharing-check-real-mlx.json');
const realResult = (): SharingCheckResult => SharingCheckResultSchema.parse(JSON.parse(readFileSync(REAL_MLX, 'utf8')));

function openPanel() {
  const panel = screen.getByRole('region', { name: 'GPU sharing' });
  fireEvent.click(within(panel).getByRole('button', { name: /GPU sharing/ }));
  return panel;
}

describe('Check GPU sharing', () => {
  it('starts a check with the settings given, shows its progress, cancels it, and shows the finished report with a chart per policy', async () => {
    const result = realResult();
    const { bridge } = renderApp(snapshot());
    bridge.checkStatus = running(result.id, 'Experiment 2 (decode under prefill, policy off): llama-wide decodes while mamba2 prefills 12000 tokens', 0.4);
    const panel = openPanel();
    await within(panel).findByText('No reports yet.');

    fireEvent.change(within(panel).getByLabelText("A's prompt (tokens)"), { target: { value: '12000' } });
    fireEvent.change(within(panel).getByLabelText('Clients per model'), { target: { value: '2' } });
    fireEvent.change(within(panel).getByLabelText('Seconds of load'), { target: { value: '5' } });
    fireEvent.click(within(panel).getByRole('button', { name: 'Check GPU sharing' }));
    expect(bridge.startSharingCheck).toHaveBeenCalledWith({ promptTokens: 12_000, streams: 2, seconds: 5 });

    const progress = await within(panel).findByRole('progressbar', { name: 'Check progress' });
    expect(progress.getAttribute('aria-valuenow')).toBe('0.4');
    expect(within(panel).getByTestId('sharing-running').textContent).toContain('llama-wide decodes while mamba2 prefills 12000 tokens');
    expect(within(panel).queryByRole('button', { name: 'Check GPU sharing' })).toBeNull();
    fireEvent.click(within(panel).getByRole('button', { name: 'Cancel' }));
    expect(bridge.cancelCheck).toHaveBeenCalledWith(result.id);

    // The node says it is done: the page reads the list again and shows the report.
    bridge.checks = {
      checks: [{ id: result.id, startedAt: result.startedAt, models: result.models.map((m) => m.id), simulated: false, decodeRatio: 0.5 }],
      running: null,
    };
    bridge.checkStatus = { ...running(result.id, 'Done', 1), state: 'done', result, markdown: '# GPU sharing check' };
    const report = await within(panel).findByTestId('sharing-report');
    expect(within(panel).getAllByTestId('sharing-report-row')).toHaveLength(1);
    // The page's one date format (shared/time-words.ts), in the list and the report alike, not the locale's.
    const stamp = formatDateTime(result.startedAt);
    expect(stamp).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect(within(panel).getAllByTestId('sharing-report-row')[0]!.textContent).toContain(stamp);
    expect(within(report).getByRole('heading', { level: 3 }).textContent).toContain(stamp);
    expect(within(report).queryByTestId('sharing-simulated')).toBeNull();
    if (!result.decode.ran) throw new Error('the kept real-MLX report has no decode experiment');
    const runs = within(report).getAllByTestId('sharing-run');
    expect(runs.map((r) => r.getAttribute('data-policy'))).toEqual(result.decode.runs.map((r) => r.policy));
    const off = result.decode.runs[0]!;
    expect(runs[0]!.textContent).toContain(`decodes at ${Math.round(off.decodeRatio! * 100)} % of its solo rate while mamba2 prefills`);
    expect(within(runs[0]!).getByTestId('itl-chart').getAttribute('data-points')).toBe(String(Math.min(600, off.itl.length)));
    expect(within(report).getByTestId('sharing-ttft').textContent).toContain('0.23 s');
    expect(within(report).getByTestId('sharing-throughput').textContent).toContain('requests/min');
  });

  it('labels a simulated report, shows a check that is already running, and says when one ends cancelled', async () => {
    const result = { ...realResult(), simulated: true };
    const { bridge } = renderApp(snapshot());
    bridge.checks = {
      checks: [{ id: result.id, startedAt: result.startedAt, models: ['sim/llama-3.2-3b', 'sim/llama-3.2-1b'], simulated: true, decodeRatio: null }],
      running: running('sharing-live', 'Experiment 1 (time to first token)', 0.1),
    };
    bridge.checkStatus = running('sharing-live', 'Experiment 1 (time to first token)', 0.1);
    const panel = openPanel();
    await within(panel).findByTestId('sharing-running');
    expect(within(panel).getByTestId('sharing-report-row').textContent).toContain('simulated');

    bridge.checkStatus = { ...running('sharing-live', 'Cancelled', 0.1), state: 'cancelled' };
    bridge.checks = { ...bridge.checks, running: null };
    await within(panel).findByText('The check was cancelled; the models are as they were.');
    expect(within(panel).getByRole('button', { name: 'Check GPU sharing' })).toBeTruthy();

    bridge.checkStatus = { ...running(result.id, 'Done', 1), state: 'done', result, markdown: '# report' };
    await act(async () => fireEvent.click(within(panel).getByTestId('sharing-report-row')));
    const report = await within(panel).findByTestId('sharing-report');
    expect(within(report).getByTestId('sharing-simulated').textContent).toContain('not evidence');
  });
});
