/**
 * A stalled load's buttons: on exo_load_stalled, Place again sends the warning's model
 * through the lost model's action and Stop stops its instance; on runner_load_stalled
 * (this Mac's runner) only Stop is offered. The whole path against the fake exo is
 * test/e2e/exo-load-stall.e2e.test.ts.
 */
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { Warning } from '../../../../shared/snapshot';
import { snapshot } from '../../../../test/support/renderer/fixtures';
import { renderApp } from '../../../../test/support/renderer/render-app';

afterEach(cleanup);

const exoStalled: Warning = {
  code: 'exo_load_stalled',
  instanceIds: ['exo:exobar/tiny-llama-b'],
  model: 'exobar/tiny-llama-b',
  title: 'tiny-llama-b on studio-b has not moved for 130 s while loading, 4 of 16 layers loaded',
  risk: 'exo has no load timeout (removed in exo PR #1889)',
  fix: 'Stop it and place it again (Place again in exobar does both, as it was placed)',
};

const localStalled: Warning = {
  code: 'runner_load_stalled',
  instanceIds: ['i1'],
  model: 'sim/llama-3.2-1b',
  title: 'sim/llama-3.2-1b has not moved for 130 s while loading, 4 of 16 layers loaded',
  risk: 'mlx-lm has no load timeout',
  fix: 'Stop it and launch it again',
};

const banner = (code: string) => screen.getAllByTestId('warning-banner').find((b) => b.getAttribute('data-code') === code)!;

describe('the load-stall warnings', () => {
  it('exo_load_stalled: Place again goes through the lost model action with the model', async () => {
    const { bridge } = renderApp(snapshot({ warnings: [exoStalled] }));
    fireEvent.click(within(banner('exo_load_stalled')).getByRole('button', { name: 'Place again' }));
    await waitFor(() => expect(bridge.placeLostModelAgain).toHaveBeenCalledWith('exobar/tiny-llama-b'));
  });

  it("exo_load_stalled: Stop stops the warning's instance", async () => {
    const { bridge } = renderApp(snapshot({ warnings: [exoStalled] }));
    fireEvent.click(within(banner('exo_load_stalled')).getByRole('button', { name: 'Stop tiny-llama-b' }));
    await waitFor(() => expect((bridge.stopInstance.mock.calls as unknown[][])[0]?.[0]).toBe('exo:exobar/tiny-llama-b'));
  });

  it('runner_load_stalled: Stop only, for the local instance', async () => {
    const { bridge } = renderApp(snapshot({ warnings: [localStalled] }));
    const local = within(banner('runner_load_stalled'));
    expect(local.queryByRole('button', { name: 'Place again' })).toBeNull();
    fireEvent.click(local.getByRole('button', { name: 'Stop llama-3.2-1b' }));
    await waitFor(() => expect((bridge.stopInstance.mock.calls as unknown[][])[0]?.[0]).toBe('i1'));
  });
});
