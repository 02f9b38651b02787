/**
 * The exo_model_lost warning's buttons: Place again and Dismiss send the warning's model
 * through the bridge, and exo's refusal becomes the page's notice (the warning stays).
 * The whole path against the fake exo's cluster is test/e2e/exo-cluster.e2e.test.ts.
 */
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { Warning } from '../../../../shared/snapshot';
import { snapshot } from '../../../../test/support/renderer/fixtures';
import { renderApp } from '../../../../test/support/renderer/render-app';

afterEach(cleanup);

const lost: Warning = {
  code: 'exo_model_lost',
  instanceIds: ['exo:exobar/tiny-llama'],
  model: 'exobar/tiny-llama',
  title: 'tiny-llama was lost: studio-b left at 15:26',
  risk: 'exo deleted its instance, which ran on studio-a and studio-b, at 15:26',
  fix: 'Place again: it asks exo for the same placement (ring, Pipeline, 2 Macs)',
};

const banner = () => screen.getAllByTestId('warning-banner').find((b) => b.getAttribute('data-code') === 'exo_model_lost')!;

describe('the lost-model warning', () => {
  it('places the model again through the bridge', async () => {
    const { bridge } = renderApp(snapshot({ warnings: [lost] }));
    fireEvent.click(within(banner()).getByRole('button', { name: 'Place again' }));
    await waitFor(() => expect(bridge.placeLostModelAgain).toHaveBeenCalledWith('exobar/tiny-llama'));
    await waitFor(() => expect(screen.getByTestId('notice').textContent).toContain('Placing exobar/tiny-llama again on studio-a'));
  });

  it("shows exo's reason when it cannot place the model, and keeps the warning", async () => {
    const { bridge } = renderApp(snapshot({ warnings: [lost] }));
    bridge.placeLostModelAgain.mockRejectedValueOnce(new Error('exo cannot place exobar/tiny-llama as before: No cycles found with sufficient memory'));
    fireEvent.click(within(banner()).getByRole('button', { name: 'Place again' }));
    await waitFor(() => expect(screen.getByTestId('notice').textContent).toContain('No cycles found with sufficient memory'));
    expect(banner()).toBeTruthy();
  });

  it('dismisses the loss through the bridge', async () => {
    const { bridge } = renderApp(snapshot({ warnings: [lost] }));
    fireEvent.click(within(banner()).getByRole('button', { name: 'Dismiss' }));
    await waitFor(() => expect(bridge.dismissLostModel).toHaveBeenCalledWith('exobar/tiny-llama'));
  });
});
