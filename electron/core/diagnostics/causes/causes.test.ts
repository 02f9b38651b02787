/**
 * Each cause module on its own: a hand-built history where its facts fit gives its
 * verdict, and one where they do not gives null, so the composer's fixed order
 * (electron/core/diagnostics/diagnosis.ts) can fall through to the next cause.
 */
import { describe, expect, it } from 'vitest';
import type { NodeEvent, RequestTimeline } from '../../node/node-types';
import { NO_DECODE } from '../../sharing/decode-timing';
import { diagnosisContext, type DiagnosisContext, type ExaminedRequest } from '../diagnosis-context';
import { DEFAULT_DIAGNOSIS_OPTIONS } from '../diagnosis-types';
import { ttftParts } from '../diagnosis';
import { soloFor } from '../solo-reference';
import { endedPartWay } from './ended-part-way';
import { modelLoad } from './model-load';
import { nodeDispatchDelay } from './node-dispatch-delay';
import { ownPrefill } from './own-prefill';
import { queuedBehindSameModelPrefill } from './queued-behind-same-model-prefill';
import { runnerCrashed } from './runner-crashed';
import { runnerStuck } from './runner-stuck';
import { sharedGpu } from './shared-gpu';
import { unexplainedAckWait } from './unexplained-ack-wait';
import { waitingForRunner } from './waiting-for-runner';

const A = 'model-a-1';
const B = 'model-b-2';
const NOW = 60_000;

/** A request that arrived at `arrivedAt`, written 0.5 ms later and acknowledged 1 ms after that, unless `over` says otherwise. */
function request(requestId: string, instanceId: string, arrivedAt: number, over: Partial<RequestTimeline> = {}): RequestTimeline {
  const written = { dispatchedAt: arrivedAt + 0.5, acknowledgedAt: arrivedAt + 1.5, prefillStartAt: arrivedAt + 1.5 };
  const notYet = { prefillEndAt: null, firstTokenAt: null, endedAt: null, ttft: null };
  const decode = { ...NO_DECODE, decodeSharing: { soloGaps: 0, soloMs: 0, neighbours: [] }, concurrentBusyInstances: [] };
  const model = `sim/${instanceId.slice(0, 7)}`;
  return { requestId, instanceId, model, arrivedAt, promptTokens: 100, completionTokens: 0, outcome: 'finished', ...written, ...notYet, ...decode, ...over };
}

const status = (instanceId: string, t: number, kind: 'RunnerReady' | 'RunnerLoading'): NodeEvent => ({
  t,
  kind: 'runner_status',
  instanceId,
  data: { status: kind === 'RunnerReady' ? { kind } : { kind, layersLoaded: 3, totalLayers: 16 } },
});

/** The context of `timelines` and `events`, and the examined form of the request `id`. */
function examine(timelines: RequestTimeline[], events: NodeEvent[], id: string): { ctx: DiagnosisContext; r: ExaminedRequest } {
  const ctx = diagnosisContext(timelines, events, { ...DEFAULT_DIAGNOSIS_OPTIONS, now: NOW });
  const t = timelines.find((o) => o.requestId === id)!;
  const until = t.firstTokenAt ?? t.endedAt ?? NOW;
  return { ctx, r: { t, until, parts: ttftParts(t, until), reference: soloFor(ctx.solo, t) } };
}

describe('model_load', () => {
  it('reports the load part of a request that came while its model loaded', () => {
    const t = request('r', A, 0, { loadedAt: 4200, dispatchedAt: 4200.5, acknowledgedAt: 4201, firstTokenAt: 4300, endedAt: 4400 });
    const { ctx, r } = examine([t], [], 'r');
    expect(r.parts.loadMs).toBe(4200);
    expect(modelLoad(ctx, r)).toEqual({
      cause: 'model_load',
      bugToReport: false,
      explanation: 'Waited 4.20 s for sim/model-a to load: the request came while its model was loading (a load on request, or one it joined).',
      evidence: { loadMs: 4200 },
    });
  });
});

describe('waiting_for_runner and node_dispatch_delay', () => {
  it('a gap while the runner was loading is legitimate waiting', () => {
    const t = request('r', A, 100, { dispatchedAt: 2100, acknowledgedAt: 2101, firstTokenAt: 2200, endedAt: 2300 });
    const { ctx, r } = examine([t], [status(A, 0, 'RunnerLoading'), status(A, 2090, 'RunnerReady')], 'r');
    const v = waitingForRunner(ctx, r)!;
    expect(v.cause).toBe('waiting_for_runner');
    expect(v.explanation).toBe(`Waited 2.00 s in the node's queue while the runner of ${A} was not ready (RunnerLoading).`);
    expect(v.evidence).toEqual({ dispatchMs: 2000, runnerStatuses: ['RunnerReady', 'RunnerLoading'], inFlightAtArrival: 0 });
  });

  it('a gap that ends the moment a sibling frees its slot is waiting at the in-flight cap', () => {
    const sibling = request('s', A, 0, { firstTokenAt: 50, endedAt: 1998 });
    const t = request('r', A, 10, { dispatchedAt: 2000, acknowledgedAt: 2001, firstTokenAt: 2100, endedAt: 2200 });
    const { ctx, r } = examine([sibling, t], [status(A, 0, 'RunnerReady')], 'r');
    expect(waitingForRunner(ctx, r)?.explanation).toMatch(/1 requests already filled the runner's in-flight slots/);
  });

  it('a gap at a ready runner with room is no wait for the runner, and is reported as a node bug with the plan-loop signature', () => {
    // B's task waited 1.8 s for its acknowledgement while A's sat unwritten: exo's blocking loop.
    const other = request('o', B, 0, { dispatchedAt: 100, acknowledgedAt: 1900, firstTokenAt: 1950, endedAt: 2000 });
    const t = request('r', A, 50, { dispatchedAt: 1905, acknowledgedAt: 1906, firstTokenAt: 1950, endedAt: 2000 });
    const events = [status(A, 0, 'RunnerReady'), status(B, 0, 'RunnerReady')];
    const { ctx, r } = examine([other, t], events, 'r');
    expect(waitingForRunner(ctx, r)).toBeNull();
    const v = nodeDispatchDelay(ctx, r);
    expect(v.cause).toBe('node_dispatch_delay');
    expect(v.bugToReport).toBe(true);
    expect(v.evidence.otherRunnersAwaitingAck).toEqual([{ instanceId: B, requestId: 'o', awaitingAckMs: 1800, acknowledgedBeforeDispatchMs: 5 }]);
    expect(v.explanation).toMatch(/Meanwhile request o on model-b-2 waited 1.80 s for its acknowledgement/);
  });
});

describe('queued_behind_same_model_prefill and unexplained', () => {
  const long = request('long', A, 0, { promptTokens: 8000, prefillEndAt: 5000, firstTokenAt: 5010, endedAt: 6000 });

  it('an ack that waited for the same runner\u2019s long prefill names that prefill', () => {
    const t = request('r', A, 1000, { acknowledgedAt: 5020, firstTokenAt: 5100, endedAt: 5200 });
    const { ctx, r } = examine([long, t], [status(A, 0, 'RunnerReady')], 'r');
    const v = queuedBehindSameModelPrefill(ctx, r)!;
    expect(v.cause).toBe('queued_behind_same_model_prefill');
    expect(v.evidence).toMatchObject({ blockingRequestId: 'long', blockingPromptTokens: 8000, overlapMs: 4009.5, ackedWithinMsOfBlockingPrefillEnd: 10 });
  });

  it('an ack wait the same runner\u2019s prefill covers less than half of is unexplained, and still-waiting is said so', () => {
    const t = request('r', A, 5005, { acknowledgedAt: null, prefillStartAt: null, outcome: 'in_flight' });
    const { ctx, r } = examine([long, t], [status(A, 0, 'RunnerReady')], 'r');
    expect(queuedBehindSameModelPrefill(ctx, r)).toBeNull();
    const v = unexplainedAckWait(ctx, r);
    expect(v.cause).toBe('unexplained');
    expect(v.explanation).toMatch(/still waiting at export: a stuck runner is likely/);
    expect(v.evidence).toEqual({ ackWaitMs: r.parts.ackWaitMs, sameRunnerPrefillOverlapMs: 4.5 });
  });
});

describe('shared_gpu and own_prefill', () => {
  // Solo samples of A: 1000 ms from ack to first token.
  const solos = [0, 10_000, 20_000].map((at, i) => request(`solo${i}`, A, at, { firstTokenAt: at + 1001.5, endedAt: at + 1100 }));
  const neighbour = request('n', B, 30_000, { firstTokenAt: 33_000, endedAt: 34_000 });

  it('a compute twice the solo time while a neighbour was busy throughout is the shared GPU, with the fast-synch hazard', () => {
    const t = request('r', A, 30_000, { firstTokenAt: 32_001.5, endedAt: 32_100, concurrentBusyInstances: [B] });
    const hello: NodeEvent = { t: 0, kind: 'runner_hello', instanceId: B, data: { fastSynch: true, engine: 'sim', decided: true } };
    const { ctx, r } = examine([...solos, neighbour, t], [hello], 'r');
    const v = sharedGpu(ctx, r)!;
    expect(v.cause).toBe('shared_gpu');
    expect(v.evidence).toMatchObject({ serviceMs: 2000, soloServiceMs: 1000, slowdown: 2, sharedFraction: 1, confirmed: true });
    expect(v.explanation).toMatch(/2\.00x its solo time .* Fast synch is on/);
  });

  it('no busy neighbour is no shared GPU: its own prefill, at the rate of the tokens it processed', () => {
    const t = request('r', A, 30_000, { promptTokens: 100, firstTokenAt: 32_001.5, endedAt: 32_100 });
    const { ctx, r } = examine([...solos, t], [], 'r');
    expect(sharedGpu(ctx, r)).toBeNull();
    const v = ownPrefill(ctx, r);
    expect(v.cause).toBe('own_prefill');
    expect(v.explanation).toBe(
      'Its own prefill of 100 prompt tokens took 2.00 s (50 tokens/s) (2.00x the solo time of comparable prompts): the prompt is long, nothing else held it up.',
    );
  });

  it('a request cancelled part-way is said to have processed only what its last progress reported', () => {
    const t = request('r', A, 0, { promptTokens: 4000, endedAt: 3001.5, outcome: 'cancelled' });
    const progress: NodeEvent = { t: 2001.5, kind: 'prefill_progress', instanceId: A, requestId: 'r', data: { processed: 1000, total: 4000 } };
    const { ctx, r } = examine([t], [progress], 'r');
    expect(ownPrefill(ctx, r).explanation).toMatch(/^Its own prefill ran 3\.00 s and processed 1000 of its 4000 prompt tokens \(500 tokens\/s\)/);
    expect(endedPartWay(ctx, t)).toBe('Cancelled part-way through its prefill, at 1000 of 4000 prompt tokens.');
  });
});

describe('ended part-way', () => {
  it('notes a failure before any progress, and nothing for a request that got its first token', () => {
    const failed = request('f', A, 0, { endedAt: 500, outcome: 'failed' });
    const done = request('d', A, 0, { firstTokenAt: 400, endedAt: 500 });
    const { ctx } = examine([failed, done], [], 'f');
    expect(endedPartWay(ctx, failed)).toBe('Failed before its prefill made progress (0 of 100 prompt tokens processed).');
    expect(endedPartWay(ctx, done)).toBeNull();
  });
});

describe('runner_stuck and runner_crashed', () => {
  const failed = (code: 'runner_stuck' | 'runner_crashed'): NodeEvent => ({
    t: 3000,
    kind: 'request_failed',
    instanceId: A,
    requestId: 'r',
    data: { completionTokens: 0, code, reason: code },
  });
  const t = request('r', A, 0, { endedAt: 3000, outcome: 'failed' });

  it('a watchdog kill names the phase, the silence, the deadline and a relaunch that did not happen', () => {
    const events: NodeEvent[] = [
      failed('runner_stuck'),
      { t: 2999, kind: 'watchdog_fired', instanceId: A, data: { phase: 'prefill', silentMs: 2500, deadlineMs: 2000 } },
      { t: 3100, kind: 'runner_state', instanceId: A, data: { from: 'serving', to: 'needs_attention', reason: 'stuck 3 times' } },
    ] as NodeEvent[];
    const { ctx, r } = examine([t], events, 'r');
    expect(runnerCrashed(ctx, r)).toBeNull();
    const v = runnerStuck(ctx, r)!;
    expect(v.cause).toBe('runner_stuck');
    expect(v.explanation).toMatch(
      /went silent during prefill after 2\.50 s without output \(its deadline: 2\.00 s\);.* It was not relaunched: stuck 3 times\.$/,
    );
    expect(v.evidence).toMatchObject({ failureCode: 'runner_stuck', runnerStateAfter: { state: 'needs_attention', reason: 'stuck 3 times' } });
  });

  it('a crash names the signal and the stderr log; a request that did not fail is no death', () => {
    const events: NodeEvent[] = [
      failed('runner_crashed'),
      { t: 3001, kind: 'runner_exited', instanceId: A, data: { cause: 'crashed', code: null, signal: 'SIGKILL', reason: 'killed' } },
    ] as NodeEvent[];
    const { ctx, r } = examine([t], events, 'r');
    expect(runnerStuck(ctx, r)).toBeNull();
    expect(runnerCrashed(ctx, r)?.explanation).toBe(`The runner of ${A} died (signal SIGKILL) while this request was in flight; see runners/${A}/stderr.log.`);
    const fine = examine([request('r', A, 0, { firstTokenAt: 10, endedAt: 20 })], events, 'r');
    expect(runnerCrashed(fine.ctx, fine.r)).toBeNull();
  });
});
