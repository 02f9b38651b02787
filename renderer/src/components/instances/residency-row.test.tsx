import { cleanup, fireEvent, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { instance, snapshot } from '../../../../test/support/renderer/fixtures';
import { renderApp } from '../../../../test/support/renderer/render-app';

afterEach(cleanup);

describe('residency on the model card', () => {
  it('says when an idle model unloads, pins it and unloads it now', () => {
    const at = 1_700_000_000_000;
    const idle = instance({
      residency: { pinned: false, ttlSeconds: 1800, loadedOnDemand: true, lastUsedAt: at, idleSince: at, unloadsAt: at + 12 * 60_000, memoryBytes: 1 },
    });
    const { bridge } = renderApp(snapshot({ at, instances: [idle] }));
    const row = within(screen.getByRole('region', { name: 'Llama 3.2 1B (simulated)' })).getByTestId('residency-row');
    expect(within(row).getByTestId('residency-words').textContent).toBe('idle, unloads in 12 min');
    expect(row.textContent).toContain('Loaded on request');
    fireEvent.click(within(row).getByRole('button', { name: /Unload Llama 3.2 1B \(simulated\) now/ }));
    expect(bridge.unloadInstance).toHaveBeenCalledWith(idle.id);
  });

  it('pins a model from its card', () => {
    const { bridge } = renderApp(snapshot({ instances: [instance()] }));
    fireEvent.click(within(screen.getByTestId('residency-row')).getByRole('checkbox', { name: /Pin Llama/ }));
    expect(bridge.setResidency).toHaveBeenCalledWith('inst-1b', { pin: true });
  });

  it('says pinned, and offers no unload while requests run', () => {
    const busy = instance({
      residency: { pinned: true, ttlSeconds: 1800, loadedOnDemand: false, lastUsedAt: 1, idleSince: null, unloadsAt: null, memoryBytes: 1 },
      queue: {
        capacity: 64,
        requests: [
          { id: 'r1', phase: 'decoding', ageMs: 10, promptTokens: 3, completionTokens: 1, decodeTokensPerSecond: null, itlP50Ms: null, itlP95Ms: null },
        ],
      },
    });
    renderApp(snapshot({ instances: [busy] }));
    const row = screen.getByTestId('residency-row');
    expect(within(row).getByTestId('residency-words').textContent).toBe('pinned');
    expect((within(row).getByRole('button', { name: /Unload/ }) as HTMLButtonElement).disabled).toBe(true);
  });
});
