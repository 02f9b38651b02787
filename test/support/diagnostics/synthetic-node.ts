/**
 * The fake node (test/support/fake-node.ts) with hand-made state, for the bundle's tests
 * and benchmark: two instances (a 1B and a 3B), the 3B's long prefill with a request
 * queued behind it, and whatever log text a test wants to plant.
 */
import type { LocalInstanceSnapshot } from '../../../shared/snapshot';
import type { NodeEvent, RequestTimeline } from '../../../electron/core/node/node-types';
import { evenDecode } from '../decode-fixture';
import { FakeNode } from '../fake-node';
import { instanceFixture } from '../instance-fixture';

export const SMALL = 'llama-3.2-1b-1';
export const MEDIUM = 'llama-3.2-3b-2';

function instance(id: string, model: string, extra: Partial<LocalInstanceSnapshot> = {}): LocalInstanceSnapshot {
  return instanceFixture({ id, model, modelName: model, counters: { completed: 2, failed: 0, cancelled: 0, rejected: 0 }, ...extra });
}

export interface SyntheticNodeOptions {
  /** Log text per instance id. */
  logs?: Record<string, { stdout: string; stderr: string }>;
  /** Extra events appended after the built-in ones. */
  events?: NodeEvent[];
  /** Extra requests beyond the built-in three (e.g. to fill the ring buffer in the benchmark). */
  timelines?: RequestTimeline[];
  /** More instances (the benchmark's 8 runners). */
  instanceIds?: string[];
}

/** The state of exo's measurement in small: the 3B prefills ~30k tokens for ~19 s, a 3B request waits for its ack, a 1B request runs beside it. */
export function syntheticNode(options: SyntheticNodeOptions = {}): FakeNode {
  const base = 100_000;
  const timelines: RequestTimeline[] = [
    {
      requestId: 'chatcmpl-long',
      instanceId: MEDIUM,
      model: 'sim/llama-3.2-3b',
      promptTokens: 30_000,
      completionTokens: 40,
      arrivedAt: base,
      dispatchedAt: base + 0.2,
      acknowledgedAt: base + 80,
      prefillStartAt: base + 80,
      prefillEndAt: base + 19_000,
      firstTokenAt: base + 19_030,
      endedAt: base + 19_400,
      outcome: 'finished',
      ttft: null,
      ...evenDecode(40, base + 19_030, base + 19_400),
      concurrentBusyInstances: [SMALL],
    },
    {
      requestId: 'chatcmpl-queued',
      instanceId: MEDIUM,
      model: 'sim/llama-3.2-3b',
      promptTokens: 25,
      completionTokens: 8,
      arrivedAt: base + 3500,
      dispatchedAt: base + 3500.3,
      acknowledgedAt: base + 19_031,
      prefillStartAt: base + 19_031,
      prefillEndAt: base + 19_040,
      firstTokenAt: base + 19_120,
      endedAt: base + 19_300,
      outcome: 'finished',
      ttft: null,
      ...evenDecode(8, base + 19_120, base + 19_300),
      concurrentBusyInstances: [],
    },
    {
      requestId: 'chatcmpl-short',
      instanceId: SMALL,
      model: 'sim/llama-3.2-1b',
      promptTokens: 25,
      completionTokens: 8,
      arrivedAt: base + 3600,
      dispatchedAt: base + 3600.2,
      acknowledgedAt: base + 3680,
      prefillStartAt: base + 3680,
      prefillEndAt: base + 3900,
      firstTokenAt: base + 3990,
      endedAt: base + 4100,
      outcome: 'finished',
      ttft: null,
      ...evenDecode(8, base + 3990, base + 4100, [
        { instanceId: MEDIUM, model: 'sim/llama-3.2-3b', modelName: 'Llama 3.2 3B (simulated)', phase: 'prefilling', node: null },
      ]),
      concurrentBusyInstances: [MEDIUM],
    },
    ...(options.timelines ?? []),
  ];
  const ids = [SMALL, MEDIUM, ...(options.instanceIds ?? [])];
  const events: NodeEvent[] = [
    ...ids.map((id, i): NodeEvent => ({
      t: base - 5000 + i,
      kind: 'instance_created',
      instanceId: id,
      data: { model: `sim/${id}`, instanceType: 'ring', fastSynch: false, reason: 'ring instance' },
    })),
    ...ids.map((id, i): NodeEvent => ({ t: base - 4000 + i, kind: 'runner_hello', instanceId: id, data: { fastSynch: false, engine: 'sim', decided: false } })),
    ...ids.map((id, i): NodeEvent => ({ t: base - 3000 + i, kind: 'runner_status', instanceId: id, data: { status: { kind: 'RunnerReady' } } })),
    ...timelines.flatMap((t): NodeEvent[] => [
      { t: t.arrivedAt, kind: 'request_arrived', instanceId: t.instanceId, requestId: t.requestId, data: { promptTokens: t.promptTokens } },
      { t: t.dispatchedAt!, kind: 'request_dispatched', instanceId: t.instanceId, requestId: t.requestId },
      { t: t.acknowledgedAt!, kind: 'request_acknowledged', instanceId: t.instanceId, requestId: t.requestId },
      { t: t.endedAt!, kind: 'request_finished', instanceId: t.instanceId, requestId: t.requestId, data: { completionTokens: t.completionTokens } },
    ]),
    ...(options.events ?? []),
  ];
  const node = new FakeNode();
  node.publish({
    version: '0.1.0',
    apiBaseUrl: 'http://127.0.0.1:52416/v1',
    instances: [
      instance(SMALL, 'sim/llama-3.2-1b'),
      instance(MEDIUM, 'sim/llama-3.2-3b'),
      ...(options.instanceIds ?? []).map((id) => instance(id, `sim/${id}`)),
    ],
    rejectedInputs: { http: 1 },
  });
  node.events = events;
  node.timelines = timelines;
  node.logs = options.logs ?? {};
  return node;
}
