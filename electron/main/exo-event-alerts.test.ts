import { describe, expect, it } from 'vitest';
import type { ExoClusterEvent } from '../../shared/exo-cluster-events';
import { snapshot } from '../../test/support/electron/snapshot-fixtures';
import { exoSectionFixture } from '../../test/support/exo-snapshot-fixture';
import { operatorAlerts } from './operator-alerts';

const left: ExoClusterEvent = {
  id: 'e1',
  at: 1_000,
  kind: 'node_left',
  nodes: [{ nodeId: '710bce7a2aec', name: 'studio-b', label: 'studio-b', lastSeenAt: 900 }],
  model: null,
  instanceId: null,
  cause: null,
  causeNodes: [],
  loss: true,
  summary: 'studio-b left the cluster (last seen 15:24:29)',
};
const deleted: ExoClusterEvent = {
  ...left,
  id: 'e2',
  kind: 'instance_deleted',
  model: 'exobar/tiny-llama',
  cause: 'node_left',
  summary: 'tiny-llama deleted by exo',
};

describe('exo event alerts', () => {
  it('notify a Mac that left the cluster once, and not the deletions its lost-model warnings carry', () => {
    const before = snapshot({ exo: exoSectionFixture({ events: [] }) });
    const after = snapshot({ seq: 2, exo: exoSectionFixture({ events: [left, deleted] }) });
    const alerts = operatorAlerts(before, after);
    expect(alerts).toEqual([expect.objectContaining({ kind: 'exo_event', title: 'studio-b left the exo cluster' })]);
    expect(alerts[0]!.body).toContain('studio-b left the cluster (last seen 15:24:29)');
    expect(operatorAlerts(after, { ...after, seq: 3 })).toEqual([]);
  });
});
