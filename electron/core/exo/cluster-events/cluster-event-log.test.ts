import { describe, expect, it } from 'vitest';
import type { ExoInstance, ExoNodeFacts, ExoRunnerStatus } from '../attach/parse-exo-state';
import { ClusterEventLog, type ClusterReading } from './cluster-event-log';
import { ExoOwnActions } from './exo-own-actions';
import { nodeLabels } from './node-labels';

const node = (name: string | null, lastSeenAt = 1): ExoNodeFacts => ({
  name,
  chip: null,
  model: null,
  memoryTotalBytes: null,
  memoryAvailableBytes: null,
  gpuUsage: null,
  lastSeenAt,
});
const instance = (id: string, model: string, nodeIds: string[]): ExoInstance => ({
  instanceId: id,
  kind: 'MlxRingInstance',
  known: true,
  instanceType: 'ring',
  modelId: model,
  sharding: 'Pipeline',
  shards: nodeIds.map((nodeId, rank) => ({ runnerId: `${id}-r${rank}`, nodeId, rank, startLayer: null, endLayer: null })),
});
const runner = (tag: string, errorMessage: string | null = null): ExoRunnerStatus => ({
  tag,
  known: true,
  layersLoaded: null,
  totalLayers: null,
  errorMessage,
  diagnostics: [],
});

function reading(
  at: number,
  nodes: Record<string, ExoNodeFacts>,
  instances: ExoInstance[],
  runnerTags: Record<string, string> = {},
  nodesAt = at,
): ClusterReading {
  const runners = new Map<string, ExoRunnerStatus>();
  for (const i of instances)
    for (const s of i.shards)
      runners.set(s.runnerId, runner(runnerTags[s.runnerId] ?? 'RunnerReady', runnerTags[s.runnerId] === 'RunnerFailed' ? 'Terminated (signal=6)' : null));
  return { at, attachedNodeId: 'aaaa01', nodes: new Map(Object.entries(nodes)), instances: new Map(instances.map((i) => [i.instanceId, i])), runners, nodesAt };
}

const A = { aaaa01: node('studio-a') };
const AB = { ...A, bbbb02: node('studio-b') };

describe('the cluster event log', () => {
  it('says a deletion was through exobar when exobar asked exo for it, and gives it no loss', () => {
    const own = new ExoOwnActions(() => 0);
    const log = new ClusterEventLog({ ownActions: own });
    log.observe(reading(0, A, [instance('i1', 'm/one', ['aaaa01'])]));
    own.noteCall('DELETE', '/instance/i1', undefined, 200);
    const [event] = log.observe(reading(500, A, []));
    expect(event).toMatchObject({ kind: 'instance_deleted', cause: 'exobar', loss: false, summary: 'one deleted through exobar (it ran on studio-a)' });
  });

  it('says a placement was through exobar when exobar posted that instance, and not otherwise', () => {
    const own = new ExoOwnActions(() => 0);
    const log = new ClusterEventLog({ ownActions: own });
    log.observe(reading(0, A, []));
    own.noteCall('POST', '/instance', { instance: { MlxRingInstance: { instanceId: 'i1' } } }, 200);
    own.noteCall('POST', '/instance', { instance: { MlxRingInstance: { instanceId: 'i3' } } }, 400);
    const events = log.observe(reading(500, A, [instance('i1', 'm/one', ['aaaa01']), instance('i3', 'm/three', ['aaaa01'])]));
    expect(events.map((e) => [e.model, e.cause])).toEqual([
      ['m/one', 'exobar'],
      ['m/three', 'other'],
    ]);
    expect(events[1]!.summary).toBe('three placed on studio-a (not through exobar)');
  });

  it('holds a deletion whose Mac is still listed until the node sections are read again, then names the Mac that left', () => {
    const log = new ClusterEventLog({ ownActions: new ExoOwnActions() });
    log.observe(reading(0, AB, [instance('i1', 'm/one', ['aaaa01', 'bbbb02'])]));
    // Instances are read every 500 ms, nodes every 5 s: the deletion shows first.
    expect(log.observe(reading(500, AB, [], {}, 0))).toEqual([]);
    const events = log.observe(reading(5_000, A, []));
    // exo deletes instances only after their Mac left its topology: the Mac had left by the time they vanished.
    expect(events.map((e) => [e.kind, e.cause, e.at])).toEqual([
      ['node_left', null, 500],
      ['instance_deleted', 'node_left', 500],
    ]);
    expect(events[1]!.causeNodes).toEqual(['studio-b']);
  });

  it('publishes a deletion as not through exobar once the nodes were read after it and no Mac it used left', () => {
    const log = new ClusterEventLog({ ownActions: new ExoOwnActions() });
    log.observe(reading(0, A, [instance('i1', 'm/one', ['aaaa01'])]));
    expect(log.observe(reading(500, A, [], {}, 0))).toEqual([]);
    const [event] = log.observe(reading(5_000, A, []));
    expect(event).toMatchObject({
      kind: 'instance_deleted',
      cause: 'other',
      loss: true,
      at: 500,
      summary: 'one deleted, not through exobar (it ran on studio-a)',
    });
    expect(event).not.toHaveProperty('tentative');
  });

  it('tells exo restarting on a Mac (same name, new id) from a Mac leaving, and blames the restart for its instances', () => {
    const log = new ClusterEventLog({ ownActions: new ExoOwnActions() });
    log.observe(reading(0, AB, [instance('i1', 'm/one', ['bbbb02'])]));
    const events = log.observe(reading(5_000, { ...A, cccc03: node('studio-b') }, []));
    expect(events.map((e) => [e.kind, e.cause])).toEqual([
      ['exo_restarted', null],
      ['instance_deleted', 'exo_restarted'],
    ]);
    expect(events[0]!.nodes[0]!.nodeId).toBe('cccc03');
    expect(events[1]!.causeNodes).toEqual(['studio-b']);
  });

  it('names a Mac that joined, and the attached node getting a new id as exo restarted', () => {
    const log = new ClusterEventLog({ ownActions: new ExoOwnActions() });
    log.observe(reading(0, A, []));
    expect(log.observe(reading(5_000, AB, [])).map((e) => e.summary)).toEqual(['studio-b joined the cluster']);
    const restarted = { ...reading(10_000, { zzzz09: node('studio-a'), bbbb02: node('studio-b') }, []), attachedNodeId: 'zzzz09' };
    expect(log.observe(restarted).map((e) => e.kind)).toEqual(['exo_restarted']);
  });

  it('records a runner that failed, and the model served again by a new instance as recovered', () => {
    const log = new ClusterEventLog({ ownActions: new ExoOwnActions() });
    const one = instance('i1', 'm/one', ['aaaa01', 'bbbb02']);
    log.observe(reading(0, AB, [one]));
    const failed = log.observe(reading(500, AB, [one], { 'i1-r1': 'RunnerFailed' }));
    expect(failed.map((e) => [e.kind, e.loss, e.summary])).toEqual([
      ['runner_failed', true, 'one: the runner on studio-b (rank 1) failed: Terminated (signal=6)'],
    ]);
    expect(log.observe(reading(1_000, AB, [one], { 'i1-r1': 'RunnerFailed' }))).toEqual([]);
    const again = instance('i2', 'm/one', ['aaaa01']);
    log.observe(reading(5_000, AB, [again], { 'i2-r0': 'RunnerLoading' }));
    const events = log.observe(reading(5_500, AB, [again]));
    expect(events.map((e) => [e.kind, e.instanceId, e.cause])).toEqual([
      ['instance_deleted', 'i1', 'other'],
      ['runner_recovered', 'i2', null],
    ]);
    expect(events[1]!.summary).toBe('one is served again, on studio-a');
  });

  it('keeps the newest events within its limit, numbered in order', () => {
    const log = new ClusterEventLog({ ownActions: new ExoOwnActions(), limit: 2 });
    log.observe(reading(0, A, []));
    log.observe(reading(1, AB, []));
    log.observe(reading(2, A, []));
    log.observe(reading(3, AB, []));
    expect(log.events().map((e) => [e.id, e.kind])).toEqual([
      ['e2', 'node_left'],
      ['e3', 'node_joined'],
    ]);
  });
});

describe('node labels', () => {
  it('add a short node id only where two Macs share a name', () => {
    const labels = nodeLabels([
      ['57ebbb4c198d', { name: 'studio' }],
      ['710bce7a2aec', { name: 'studio' }],
      ['c12d40159928', { name: 'mini' }],
      ['d00d00d00d00', { name: null }],
    ]);
    expect([...labels.values()]).toEqual(['studio (57ebbb)', 'studio (710bce)', 'mini', 'node d00d00']);
  });
});
