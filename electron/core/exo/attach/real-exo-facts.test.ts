/**
 * Smaller facts of real exo (0.3.70), each pinned with a capture from a real node
 * (test/fixtures/exo/real/): node ids are not always 32 hex characters, RunnerShutdown
 * and RunnerReady.prefillServerPort are runner statuses exo sends, and a deleted
 * instance's runner lingers in /state/runners without making its model look served.
 */
import { describe, expect, it } from 'vitest';
import { isServing } from '../../../../shared/instance-state';
import { readReal, readRealText } from '../../../../test/support/fake-exo';
import type { ExoConnectionState, ExoReading } from './exo-client';
import { NodeIdSchema } from './exo-probe';
import { ExoTracker } from './exo-tracker';
import { mapInstances } from './map-exo-view';
import { parseInstances, parseNodes, parseRunners, parseTasks } from './parse-exo-state';
import { exoModelsOf } from '../proxy/exo-proxy-routes';

const REAL_NODE = '92c9d3daa1855de8d5670565526c94fd';

function readingOf(state: Record<string, unknown>): ExoReading {
  return {
    instances: parseInstances(state.instances).entries,
    runners: parseRunners(state.runners).entries,
    tasks: parseTasks(state.tasks).entries,
    nodes: parseNodes(state).nodes,
    nodesAt: 1,
    downloads: null,
    downloadsAt: null,
    fastAt: 1,
  };
}

function mapped(state: Record<string, unknown>) {
  const reading = readingOf(state);
  const connection = { url: 'http://127.0.0.1:52415', connected: true, since: 0, nodeId: REAL_NODE } as ExoConnectionState;
  return { reading, instances: mapInstances({ now: 1_000, connection, reading, tracker: new ExoTracker(), attachedFastSynch: null }) };
}

/** Replaces every occurrence of the real node id (keys and values) with `id`. */
const withNodeId = (state: Record<string, unknown>, id: string) => JSON.parse(JSON.stringify(state).replaceAll(REAL_NODE, id)) as Record<string, unknown>;

describe('real exo facts', () => {
  it('takes the real /node_id, and a node id exo stripped of leading zeros (not 32 characters)', () => {
    expect(NodeIdSchema.parse(JSON.parse(readRealText('node-id.txt')))).toBe(REAL_NODE);
    const short = '2c9d3daa1855de8d5670565526c94fd';
    expect(short).toHaveLength(31);
    expect(NodeIdSchema.safeParse(short).success).toBe(true);
    const state = withNodeId(readReal('state-ready.json'), short);
    expect(parseNodes(state).problems).toEqual([]);
    const { instances } = mapped(state);
    expect(instances[0]!.exo.runners[0]).toMatchObject({ nodeId: short, nodeName: 'studio-a', status: 'RunnerReady' });
  });

  it('reads RunnerShutdown and RunnerReady with a prefillServerPort as known statuses', () => {
    const runners = parseRunners({
      a: { RunnerShutdown: {} },
      b: { RunnerReady: { prefillServerPort: 50_123 } },
      c: { RunnerReady: { prefillServerPort: null } },
    });
    expect(runners.problems).toEqual([]);
    expect(runners.unknownTags).toBe(0);
    expect([...runners.entries!.values()].map((r) => [r.tag, r.known])).toEqual([
      ['RunnerShutdown', true],
      ['RunnerReady', true],
      ['RunnerReady', true],
    ]);
  });

  it("never shows a deleted instance's lingering runner as serving its model (RunnerShuttingDown, or still RunnerReady)", () => {
    const after = readReal('state-after-delete.json');
    expect(after.instances).toEqual({});
    expect(Object.values(after.runners as Record<string, unknown>)).toEqual([{ RunnerShuttingDown: {} }]);
    const gone = mapped(after);
    expect(gone.instances).toEqual([]);
    expect(exoModelsOf({ url: 'x', reading: gone.reading }).size).toBe(0);
    // Once it was seen still RunnerReady after the delete: still not served.
    const stillReady = {
      ...after,
      runners: Object.fromEntries(Object.keys(after.runners as object).map((id) => [id, { RunnerReady: { prefillServerPort: null } }])),
    };
    expect(mapped(stillReady).instances).toEqual([]);
  });

  it('shows a model placed again beside the stale entry with only its own runner', () => {
    const ready = readReal('state-ready.json');
    const after = readReal('state-after-delete.json');
    const [staleId] = Object.keys(after.runners as object);
    // The new placement's runner id differs from the stale one's.
    const placedAgain = JSON.parse(JSON.stringify(ready).replaceAll(staleId!, 'aaaaaaaa-0000-4000-8000-000000000001')) as Record<string, unknown>;
    placedAgain.runners = { ...(placedAgain.runners as object), [staleId!]: { RunnerShuttingDown: {} } };
    const { instances } = mapped(placedAgain);
    expect(instances).toHaveLength(1);
    expect(instances[0]!.exo.runners.map((r) => [r.runnerId, r.status])).toEqual([['aaaaaaaa-0000-4000-8000-000000000001', 'RunnerReady']]);
    expect(isServing(instances[0]!)).toBe(true);
  });
});
