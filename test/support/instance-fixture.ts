/**
 * One ready, simulated ring instance with fast synch off, as the snapshot carries it:
 * the starting point of every test's hand-made instance (renderer cards, tray glue,
 * diagnostics, the safe launch's fake node). Tests override what they are about.
 */
import type { LocalInstanceSnapshot } from '../../shared/snapshot';
import { emptySharing } from '../../shared/sharing';

export function instanceFixture(overrides: Partial<LocalInstanceSnapshot> = {}): LocalInstanceSnapshot {
  return {
    source: 'local',
    id: 'inst-1b',
    model: 'sim/llama-3.2-1b',
    modelName: 'Llama 3.2 1B (simulated)',
    engine: 'sim',
    simulated: true,
    instanceType: 'ring',
    runner: { state: 'ready', status: { kind: 'RunnerReady' }, pid: 4242, restarts: 0, restartAt: null, lastExit: null, attention: null, malformedLines: 0 },
    fastSynch: { override: 'auto', enabled: false, reason: 'ring instance', reported: false },
    queue: { capacity: 64, requests: [] },
    prefill: null,
    pendingCancels: [],
    ttft: { samples: [], p50Ms: null, p95Ms: null, latest: null },
    tokensPerSecond: null,
    counters: { completed: 0, failed: 0, cancelled: 0, rejected: 0 },
    residency: {
      pinned: false,
      ttlSeconds: 1800,
      loadedOnDemand: false,
      lastUsedAt: 1_700_000_000_000,
      idleSince: 1_700_000_000_000,
      unloadsAt: 1_700_001_800_000,
      memoryBytes: 1_503_238_554,
    },
    sharing: emptySharing(300_000, 'all'),
    ...overrides,
  };
}
