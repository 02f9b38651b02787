/** The safe launch panel's memory words and its "launch anyway" past a failed fit check. */
import { act, cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
// The plans below are the server's own output (its pure planning functions), not hand-made fixtures.
/* eslint-disable no-restricted-imports -- a test, never bundled into the page */
import { checkFit } from '../../../../electron/core/fit/check-fit';
import { estimateModelMemory } from '../../../../electron/core/fit/model-memory';
import { withFit } from '../../../../electron/core/safe-pair/plan-for-node';
/* eslint-enable no-restricted-imports */
import { SIM_MODELS } from '../../../../shared/catalog';
import { safePairPlan, snapshot } from '../../../../test/support/renderer/fixtures';
import { renderApp } from '../../../../test/support/renderer/render-app';

afterEach(cleanup);
const GiB = 1024 ** 3;

/** The plan the server sends for the sim pair on a Mac with `freeGiB` free (the production functions). */
async function planWithFree(freeGiB: number) {
  const estimates = await Promise.all(SIM_MODELS.map((m) => estimateModelMemory(m, 8192)));
  return withFit(safePairPlan(), checkFit(estimates, { freeBytes: freeGiB * GiB, gpuLimitBytes: null }));
}

describe('safe launch and the fit check', () => {
  it('says the need in words when it fits, and offers no launch anyway', async () => {
    const { bridge } = renderApp();
    bridge.getSafePairPlan.mockResolvedValue(await planWithFree(18));
    act(() => bridge.push(snapshot()));
    await waitFor(() => expect(screen.getByTestId('plan-memory').textContent).toBe('Memory: needs 5.9 GiB; 18.0 GiB free, of which 2.0 GiB is kept free for macOS and other apps: 16.0 GiB usable'));
    expect(screen.queryByTestId('launch-anyway')).toBeNull();
  });

  it('refuses with the figures, says the risk, and "Launch anyway" acknowledges the memory', async () => {
    const { bridge } = renderApp();
    bridge.getSafePairPlan.mockResolvedValue(await planWithFree(4));
    act(() => bridge.push(snapshot()));
    await waitFor(() =>
      expect(screen.getByRole('list', { name: 'Blockers' }).textContent).toBe('Not enough memory: needs 5.9 GiB; 4.0 GiB free, of which 2.0 GiB is kept free for macOS and other apps: 2.0 GiB usable.'),
    );
    const panel = screen.getByRole('region', { name: 'Safe launch' });
    expect((within(panel).getByRole('button', { name: 'Launch safe pair' }) as HTMLButtonElement).disabled).toBe(true);
    expect(screen.getByTestId('launch-anyway').textContent).toMatch(/swapping/);
    fireEvent.click(within(panel).getByRole('button', { name: 'Launch anyway' }));
    expect(bridge.launchSafePair).toHaveBeenCalledWith({ acknowledgeMemory: true });
    await act(async () => {});
  });

  it('offers no launch anyway when something other than memory blocks the plan', async () => {
    const { bridge } = renderApp();
    const plan = await planWithFree(4);
    bridge.getSafePairPlan.mockResolvedValue({ ...plan, blockers: [...plan.blockers, 'Unknown model "x" (safePair.small): it is not in the catalog.'] });
    act(() => bridge.push(snapshot()));
    await waitFor(() => expect(screen.getByRole('list', { name: 'Blockers' })).toBeTruthy());
    expect(screen.queryByTestId('launch-anyway')).toBeNull();
  });
});
