import { describe, expect, it } from 'vitest';
import { readFixture, STATE_FIXTURES, type Json, snakeCaseKeys } from '../../../../test/support/fake-exo';
import { parseInstances, parseNodes, parseRunners, parseTasks } from './parse-exo-state';

const QWEN_INSTANCE_2NODE = '9a1c3e5b-7d9f-4a1c-b3e5-8d0f2a4c6e13';
const FAILED_RUNNER = 'e5a7c9b1-3d5f-4e7a-9c1b-6d8f0a2c4e57';

function parseAll(state: Json) {
  return {
    instances: parseInstances(state.instances),
    runners: parseRunners(state.runners),
    tasks: parseTasks(state.tasks),
    nodes: parseNodes(state),
  };
}

const problems = (p: ReturnType<typeof parseAll>) => [...p.instances.problems, ...p.runners.problems, ...p.tasks.problems, ...p.nodes.problems];

describe('exo state parser over the fixtures', () => {
  it.each(STATE_FIXTURES)('reads every entry of %s without a problem', (name) => {
    const state = readFixture(name);
    const parsed = parseAll(state);
    expect(problems(parsed)).toEqual([]);
    expect(parsed.instances.entries!.size).toBe(Object.keys(state.instances as Json).length);
    expect(parsed.runners.entries!.size).toBe(Object.keys(state.runners as Json).length);
    expect(parsed.tasks.entries!.size).toBe(Object.keys(state.tasks as Json).length);
    expect(parsed.nodes.nodes.size).toBe(Object.keys(state.nodeIdentities as Json).length);
    expect(parsed.instances.unknownTags + parsed.runners.unknownTags + parsed.tasks.unknownTags).toBe(0);
  });

  it('reads a 2-node ring: kind, model, sharding, rank order and nodes', () => {
    const parsed = parseAll(readFixture('state-2node-failed-runner.json'));
    const qwen = parsed.instances.entries!.get(QWEN_INSTANCE_2NODE)!;
    expect(qwen).toMatchObject({
      kind: 'MlxRingInstance',
      known: true,
      instanceType: 'ring',
      modelId: 'mlx-community/Qwen3-30B-A3B-4bit',
      sharding: 'Pipeline',
    });
    expect(qwen.shards.map((s) => [s.rank, s.nodeId, s.startLayer, s.endLayer])).toEqual([
      [0, '7f3c9a1e5b2d48c6a09e1f4b3d8c2e71', 0, 40],
      [1, 'c41e8b72d90f4a35b6e2a1c7f08d3e59', 40, 48],
    ]);
  });

  it('reads a failed runner with its typed diagnostics', () => {
    const parsed = parseAll(readFixture('state-2node-failed-runner.json'));
    const failed = parsed.runners.entries!.get(FAILED_RUNNER)!;
    expect(failed.tag).toBe('RunnerFailed');
    expect(failed.errorMessage).toBe('Terminated (signal=6 (Abort trap: 6))');
    expect(failed.diagnostics.map((d) => d.kind)).toEqual(['RunnerRingSocketReceivingError', 'RunnerRingTransportError']);
    expect(failed.diagnostics[0]!.details).toMatchObject({ errorNumber: 54, errorName: 'ECONNRESET' });
    expect(failed.diagnostics[0]!.message).toContain('ECONNRESET');
  });

  it('reads loading layers, tasks and node facts of the one-node fixture', () => {
    const parsed = parseAll(readFixture('state-1node-two-instances.json'));
    expect(parsed.runners.entries!.get('d2f4a6c8-1e3b-4a5d-9f7c-0b8e6d4c2a91')).toMatchObject({ tag: 'RunnerLoading', layersLoaded: 9, totalLayers: 16 });
    const cancel = parsed.tasks.entries!.get('3a5c7e9b-1d3f-4b5d-8e7a-9c1e3b5d7f60')!;
    expect(cancel).toMatchObject({ kind: 'CancelTask', status: 'Pending', cancelledTaskId: '8e0b2d4f-6a8c-4e0b-9d2f-4a6c8e0b2d71' });
    const node = parsed.nodes.nodes.get('7f3c9a1e5b2d48c6a09e1f4b3d8c2e71')!;
    expect(node).toEqual({
      name: 'studio-a',
      chip: 'Apple M3 Ultra',
      model: 'Mac Studio',
      memoryTotalBytes: 274877906944,
      memoryAvailableBytes: 218406846464,
      gpuUsage: 0.97,
      lastSeenAt: Date.parse('2026-06-22T14:05:31.482Z'),
    });
  });

  it('never keeps prompt text from a task', () => {
    const parsed = parseAll(readFixture('state-1node-two-instances.json'));
    expect(JSON.stringify([...parsed.tasks.entries!.values()])).not.toContain('haiku');
  });
});

describe('exo state parser over mutated fixtures', () => {
  it.each(STATE_FIXTURES)('reads %s with every field name in snake_case the same', (name) => {
    const state = readFixture(name);
    const camel = parseAll(state);
    const snake = parseAll(snakeCaseKeys(state) as Json);
    expect(problems(snake)).toEqual([]);
    expect([...snake.instances.entries!]).toEqual([...camel.instances.entries!]);
    expect([...snake.tasks.entries!]).toEqual([...camel.tasks.entries!]);
    expect([...snake.nodes.nodes]).toEqual([...camel.nodes.nodes]);
    // Diagnostics details keep exo's names as sent: only the fields exobar reads are renamed.
    expect([...snake.runners.entries!].map(([id, r]) => [id, r.tag, r.layersLoaded, r.errorMessage])).toEqual(
      [...camel.runners.entries!].map(([id, r]) => [id, r.tag, r.layersLoaded, r.errorMessage]),
    );
  });

  it('keeps unknown tags as unknown, counted, never an error', () => {
    const state = readFixture('state-2node-failed-runner.json');
    const runners = state.runners as Json;
    runners[FAILED_RUNNER] = { RunnerHibernating: { since: 'yesterday' } };
    const instances = state.instances as Json;
    const qwen = instances[QWEN_INSTANCE_2NODE] as Json;
    instances[QWEN_INSTANCE_2NODE] = { MlxVulkanInstance: qwen.MlxRingInstance };
    (state.tasks as Json)['feed'] = { SpeculativeDecode: { taskId: 'feed', taskStatus: 'Dreaming', instanceId: QWEN_INSTANCE_2NODE } };
    const parsed = parseAll(state);
    expect(problems(parsed)).toEqual([]);
    expect(parsed.runners.entries!.get(FAILED_RUNNER)).toMatchObject({ tag: 'RunnerHibernating', known: false });
    expect(parsed.instances.entries!.get(QWEN_INSTANCE_2NODE)).toMatchObject({
      kind: 'MlxVulkanInstance',
      known: false,
      instanceType: null,
      modelId: 'mlx-community/Qwen3-30B-A3B-4bit',
    });
    expect(parsed.tasks.entries!.get('feed')).toMatchObject({ kind: 'SpeculativeDecode', known: false, status: 'Dreaming' });
    expect(parsed.runners.unknownTags + parsed.instances.unknownTags + parsed.tasks.unknownTags).toBe(3);
  });

  it('reads entries with optional fields dropped', () => {
    const state = readFixture('state-2node-failed-runner.json');
    const failed = (state.runners as Json)[FAILED_RUNNER] as { RunnerFailed: Json };
    delete failed.RunnerFailed.diagnostics;
    const task = Object.values(state.tasks as Json).find((t) => 'TextGeneration' in (t as Json)) as { TextGeneration: Json };
    delete task.TextGeneration.commandId;
    delete task.TextGeneration.taskParams;
    delete (state.nodeMemory as Record<string, Json>)['c41e8b72d90f4a35b6e2a1c7f08d3e59']!.ramAvailable;
    const parsed = parseAll(state);
    expect(problems(parsed)).toEqual([]);
    expect(parsed.runners.entries!.get(FAILED_RUNNER)).toMatchObject({ tag: 'RunnerFailed', diagnostics: [] });
    expect(parsed.tasks.entries!.get(String(task.TextGeneration.taskId))).toMatchObject({ commandId: null, status: 'Pending' });
    expect(parsed.nodes.nodes.get('c41e8b72d90f4a35b6e2a1c7f08d3e59')).toMatchObject({ memoryTotalBytes: 68719476736, memoryAvailableBytes: null });
  });

  it('skips garbage entries one by one and counts them, keeping the rest', () => {
    const state = readFixture('state-2node-failed-runner.json');
    (state.instances as Json)['bad-1'] = 'not an instance';
    (state.instances as Json)['bad-2'] = { MlxRingInstance: { instanceId: 7 } };
    (state.runners as Json)['bad-runner'] = { RunnerLoading: {}, RunnerReady: {} };
    (state.tasks as Json)['bad-task'] = { TextGeneration: { taskId: 'bad-task' } };
    (state.nodeMemory as Json)['bad-node'] = { ramTotal: 'lots' };
    (state.lastSeen as Json)['bad-node'] = 'yesterday';
    // A shard exobar cannot read leaves its runner with an unknown rank.
    const qwen = ((state.instances as Json)[QWEN_INSTANCE_2NODE] as { MlxRingInstance: { shardAssignments: { runnerToShard: Json } } }).MlxRingInstance;
    qwen.shardAssignments.runnerToShard[FAILED_RUNNER] = { PipelineShardMetadata: { deviceRank: 'zero' } };
    const parsed = parseAll(state);
    expect(parsed.instances.entries!.size).toBe(2);
    expect(parsed.runners.entries!.size).toBe(3);
    expect(parsed.tasks.entries!.size).toBe(Object.keys(state.tasks as Json).length - 1);
    expect(
      problems(parsed)
        .map((p) => `${p.section}:${p.key}`)
        .sort(),
    ).toEqual(
      [
        'instances:bad-1',
        'instances:bad-2',
        `instances:${QWEN_INSTANCE_2NODE}`,
        'lastSeen:bad-node',
        'nodeMemory:bad-node',
        'runners:bad-runner',
        'tasks:bad-task',
      ].sort(),
    );
    const shards = parsed.instances.entries!.get(QWEN_INSTANCE_2NODE)!.shards;
    expect(shards.find((s) => s.runnerId === FAILED_RUNNER)).toMatchObject({ rank: null, nodeId: '7f3c9a1e5b2d48c6a09e1f4b3d8c2e71' });
  });

  it('treats a section that is not an object as one problem and no entries', () => {
    const parsed = parseTasks([1, 2, 3]);
    expect(parsed.entries).toBeNull();
    expect(parsed.problems).toEqual([{ section: 'tasks', key: null, message: 'expected an object, got an array' }]);
  });
});
