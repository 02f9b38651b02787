import { act, cleanup, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { instance, safePairPlan, snapshot } from '../../../../test/support/renderer/fixtures';
import { renderApp } from '../../../../test/support/renderer/render-app';
import { exoInstanceFixture, exoSectionFixture } from '../../../../test/support/exo-snapshot-fixture';

afterEach(cleanup);

const GB = 1024 ** 3;

describe('the safe-launch panel on an exo cluster', () => {
  it("says each Mac's free memory once both models are placed, never 0 because nothing needs loading", async () => {
    const { bridge } = renderApp();
    const running = safePairPlan();
    bridge.getSafePairPlan.mockResolvedValue({
      ...running,
      models: running.models.map((m) => ({ ...m, alreadyRunning: true, state: 'serving' as const })),
      memory: {
        requiredBytes: 0,
        freeBytes: 45 * GB,
        headroomBytes: 2 * GB,
        byMac: [
          { nodeId: 'a', label: 'studio-a', freeBytes: 22.5 * GB },
          { nodeId: 'b', label: 'studio-b', freeBytes: 22.5 * GB },
        ],
      },
    });
    act(() => bridge.push(snapshot({ instances: [instance()] })));
    await waitFor(() =>
      expect(screen.getByTestId('plan-memory').textContent).toBe('Memory: nothing more to load (studio-a 22.5 GiB free, studio-b 22.5 GiB free)'),
    );
  });

  it('asks for a new plan when exo deletes a model or a Mac leaves, so a lost model is never shown serving', async () => {
    const { bridge } = renderApp();
    bridge.getSafePairPlan.mockResolvedValue(safePairPlan());
    const cluster = exoSectionFixture();
    act(() => bridge.push(snapshot({ instances: [exoInstanceFixture()], exo: cluster })));
    await waitFor(() => expect(bridge.getSafePairPlan).toHaveBeenCalledTimes(1));

    act(() => bridge.push(snapshot({ instances: [], exo: cluster })));
    await waitFor(() => expect(bridge.getSafePairPlan).toHaveBeenCalledTimes(2));

    act(() => bridge.push(snapshot({ instances: [], exo: { ...cluster, nodes: cluster.nodes.slice(0, 1) } })));
    await waitFor(() => expect(bridge.getSafePairPlan).toHaveBeenCalledTimes(3));
  });
});
