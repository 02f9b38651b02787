/**
 * The safe launch on a one-Mac exo cluster, in the popover: exo's fast-synch gate and
 * the per-Mac fit check each offer "Launch anyway" with their risk, and the one button
 * acknowledges what is shown. The plans are the server's own, planned on the serving fake exo.
 */
import { act, cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { oneMacPairPlan } from '../../../../test/support/fake-exo';
import { snapshot } from '../../../../test/support/renderer/fixtures';
import { renderApp } from '../../../../test/support/renderer/render-app';

afterEach(cleanup);

const panel = () => screen.getByRole('region', { name: 'Safe launch' });

describe('launch anyway on exo, in the popover', () => {
  it("offers a launch past exo's fast-synch gate, with the hazard said; the plain launch waits for that choice", async () => {
    const { bridge } = renderApp();
    bridge.getSafePairPlan.mockResolvedValue(await oneMacPairPlan(96));
    act(() => bridge.push(snapshot()));
    await waitFor(() => expect(screen.getByTestId('launch-anyway-fast_synch')).toBeTruthy());
    expect(screen.getByTestId('launch-anyway-fast_synch').textContent).toMatch(
      /^Two ring models on one GPU, fast synch assumed on\. .* with fast synch on \(assumed: exo does not publish it, its default is on\)/,
    );
    expect(screen.queryByTestId('launch-anyway-memory')).toBeNull();
    expect((within(panel()).getByRole('button', { name: 'Launch safe pair' }) as HTMLButtonElement).disabled).toBe(true);
    fireEvent.click(within(panel()).getByRole('button', { name: 'Launch anyway' }));
    expect(bridge.launchSafePair).toHaveBeenCalledWith({ acknowledgeRisk: true });
    await act(async () => {});
  });

  it('a Mac too small for both: the per-Mac figures among the blockers, and one launch anyway acknowledges memory and fast synch', async () => {
    const { bridge } = renderApp();
    bridge.getSafePairPlan.mockResolvedValue(await oneMacPairPlan(5));
    act(() => bridge.push(snapshot()));
    await waitFor(() =>
      expect(screen.getByRole('list', { name: 'Blockers' }).textContent).toMatch(
        /^Not enough memory on studio-a: needs 2\.\d GiB; 4\.0 GiB free, of which 2\.0 GiB is kept free for macOS and other apps: 2\.0 GiB usable\.$/,
      ),
    );
    expect(screen.getByTestId('plan-memory').textContent).toMatch(/^Memory: studio-a needs 2\.\d GiB; 4\.0 GiB free, of which 2\.0 GiB is kept free for macOS and other apps: 2\.0 GiB usable \(KV cache unknown/);
    expect(screen.getByTestId('launch-anyway-memory').textContent).toMatch(
      /^The safe pair does not fit on every Mac it lands on\. Launching anyway may push macOS/,
    );
    fireEvent.click(within(panel()).getByRole('button', { name: 'Launch anyway' }));
    expect(bridge.launchSafePair).toHaveBeenCalledWith({ acknowledgeMemory: true, acknowledgeRisk: true });
    await act(async () => {});
  });
});
