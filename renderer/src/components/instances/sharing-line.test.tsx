import { cleanup, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { emptySharing, type InstanceSharing } from '../../../../shared/sharing';
import { instance, snapshot } from '../../../../test/support/renderer/fixtures';
import { renderApp } from '../../../../test/support/renderer/render-app';

afterEach(cleanup);

/** What the node builds from 40 solo gaps of 10 ms and 30 of 15.625 ms beside the 3B's prefill (electron/core/sharing/sharing-stats.test.ts files the same way). */
function measuredSharing(): InstanceSharing {
  return {
    windowMs: 300_000,
    solo: { gaps: 40, decodeTokensPerSecond: 100, itlP50Ms: 10, itlP95Ms: 10 },
    neighbours: [
      {
        instanceId: 'llama-3.2-3b-2',
        model: 'sim/llama-3.2-3b',
        modelName: 'Llama 3.2 3B',
        phase: 'prefilling',
        node: null,
        gaps: 30,
        decodeTokensPerSecond: 64,
        itlP50Ms: 15.625,
        itlP95Ms: 15.625,
        decodeRatio: 0.64,
        itlP95Ratio: 1.5625,
      },
    ],
    summary: 'decodes at 64 % of its solo rate while Llama 3.2 3B prefills',
    observed: 'all',
  };
}

describe('GPU sharing on the card', () => {
  it('says in plain words how much slower the model decodes beside its neighbour', () => {
    renderApp(snapshot({ instances: [instance({ sharing: measuredSharing() })] }));
    const c = screen.getByRole('region', { name: 'Llama 3.2 1B (simulated)' });
    expect(within(c).getByTestId('sharing-summary').textContent).toBe('decodes at 64 % of its solo rate while Llama 3.2 3B prefills');
    expect(within(c).getByTestId('sharing').textContent).toContain('while Llama 3.2 3B prefills: 64.0 tok/s (64 %)');
  });

  it('says what each figure was measured over in tokens, with thousands separated, not in "gaps"', () => {
    const sharing = measuredSharing();
    sharing.solo.gaps = 3993;
    sharing.neighbours[0]!.gaps = 1;
    renderApp(snapshot({ instances: [instance({ sharing })] }));
    const text = screen.getByTestId('sharing').textContent ?? '';
    expect(text).toContain('ITL p95 10 ms (over 3,993 tokens)');
    expect(text).toContain('ITL p95 16 ms (over 1 token)');
    expect(text).not.toContain('gaps');
  });

  it('says the solo rate is not measured yet rather than "n/a … (over 0 tokens)"', () => {
    const sharing = measuredSharing();
    sharing.solo = { gaps: 0, decodeTokensPerSecond: null, itlP50Ms: null, itlP95Ms: null };
    renderApp(snapshot({ instances: [instance({ sharing })] }));
    const text = screen.getByTestId('sharing').textContent ?? '';
    expect(text).toContain('alone: not measured yet');
    expect(text).not.toContain('over 0 tokens');
  });

  it('shows nothing before any decode was measured', () => {
    renderApp(snapshot({ instances: [instance({ sharing: emptySharing(300_000, 'all') })] }));
    expect(screen.queryByTestId('sharing')).toBeNull();
  });
});
