import { describe, expect, it } from 'vitest';
import { mappedExoSnapshot, STOPPED_NODE_REMOVAL_MS, twoNodeCluster } from '../../test/support/fake-exo';
import { trayViewOf } from './tray-state';

describe('tray: models exo took away', () => {
  it('says in the exo line which models were lost and why, when a Mac left and took them', async () => {
    const lost = await mappedExoSnapshot({
      build: twoNodeCluster,
      then: async (h) => {
        await h.round(5_000);
        h.cluster.stopNode('studio-b');
        h.clock.now += STOPPED_NODE_REMOVAL_MS;
        h.cluster.step();
        await h.round(5_000);
        await h.round(5_000);
      },
    });
    const view = trayViewOf(lost);
    expect(view.state).toBe('warning');
    const line = view.tooltip.split('\n').find((l) => l.startsWith('exo at '));
    expect(line).toMatch(
      new RegExp(`^exo at ${lost.exo!.url}: 1 Mac, 0 models \\(0 serving\\), 2 lost: tiny-llama and tiny-llama-b \\(studio-b left at \\d\\d:\\d\\d\\)$`),
    );
  });
});
