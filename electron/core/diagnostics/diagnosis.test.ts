import { describe, expect, it } from 'vitest';
import type { NodeEvent, RequestTimeline } from '../node/node-types';
import { diagnose } from './diagnosis';
import { NO_DECODE } from '../sharing/decode-timing';

const B1 = 'llama-3.2-1b-1';
const B3 = 'llama-3.2-3b-2';

/** A finished request's timeline; times in monotonic ms. */
function tl(partial: Partial<RequestTimeline> & Pick<RequestTimeline, 'requestId' | 'instanceId' | 'arrivedAt'>): RequestTimeline {
  const model = partial.instanceId === B1 ? 'sim/llama-3.2-1b' : 'sim/llama-3.2-3b';
  const dispatchedAt = partial.dispatchedAt === undefined ? partial.arrivedAt + 0.3 : partial.dispatchedAt;
  const acknowledgedAt = partial.acknowledgedAt === undefined ? (dispatchedAt ?? partial.arrivedAt) + 2 : partial.acknowledgedAt;
  return {
    model,
    promptTokens: 20,
    completionTokens: 10,
    dispatchedAt,
    acknowledgedAt,
    prefillStartAt: acknowledgedAt,
    prefillEndAt: null,
    firstTokenAt: null,
    endedAt: null,
    outcome: 'finished',
    ttft: null,
    ...NO_DECODE,
    decodeSharing: { soloGaps: 0, soloMs: 0, neighbours: [] },
    concurrentBusyInstances: [],
    ...partial,
  };
}

const ready = (instanceId: string, t = 0): NodeEvent => ({ t, kind: 'runner_status', instanceId, data: { status: { kind: 'RunnerReady' } } });

/** The long 3B prompt of exo's measurement: ~30k tokens prefilled in ~19 s. */
const longPrefill = tl({
  requestId: 'long',
  instanceId: B3,
  arrivedAt: 0,
  promptTokens: 30_000,
  prefillEndAt: 19_000,
  firstTokenAt: 19_020,
  endedAt: 20_000,
});

describe('diagnose', () => {
  it('names a request that waited for its ack behind the same runner\u2019s long prefill', () => {
    const queued = tl({ requestId: 'queued', instanceId: B3, arrivedAt: 3500, acknowledgedAt: 19_030, firstTokenAt: 19_120, endedAt: 19_500 });
    const d = diagnose([longPrefill, queued], [ready(B3)], { now: 30_000 });
    const finding = d.findings.find((f) => f.requestId === 'queued')!;
    expect(finding.cause).toBe('queued_behind_same_model_prefill');
    expect(finding.dominantPart).toBe('ack_wait');
    expect(finding.evidence).toMatchObject({ blockingRequestId: 'long', blockingPromptTokens: 30_000 });
    expect(finding.evidence.overlapMs as number).toBeGreaterThan(15_000);
    expect(finding.explanation).toMatch(/between steps/);
    // The long request itself is slow because of its own prompt.
    expect(d.findings.find((f) => f.requestId === 'long')!.cause).toBe('own_prefill');
    expect(d.summary).toEqual({ queued_behind_same_model_prefill: 1, own_prefill: 1 });
  });

  it('still names it while the request is waiting at export time', () => {
    const waiting = tl({ requestId: 'waiting', instanceId: B3, arrivedAt: 3500, acknowledgedAt: null, outcome: 'in_flight' });
    const d = diagnose([{ ...longPrefill, firstTokenAt: null, prefillEndAt: 8000, endedAt: null, outcome: 'in_flight' }, waiting], [], { now: 9000 });
    const finding = d.findings.find((f) => f.requestId === 'waiting')!;
    expect(finding).toMatchObject({ cause: 'queued_behind_same_model_prefill', ttftMs: null, elapsedMs: 5500 });
  });

  it('names GPU sharing when a model is slower than its solo runs while another runner is busy', () => {
    const solo = [0, 1, 2].map((i) =>
      tl({
        requestId: `solo${i}`,
        instanceId: B1,
        arrivedAt: i * 1000,
        acknowledgedAt: i * 1000 + 5,
        prefillEndAt: i * 1000 + 200,
        firstTokenAt: i * 1000 + 230,
        endedAt: i * 1000 + 300,
      }),
    );
    const shared = tl({
      requestId: 'shared',
      instanceId: B1,
      arrivedAt: 5000,
      acknowledgedAt: 5005,
      prefillEndAt: 5350,
      firstTokenAt: 5390,
      endedAt: 5500,
      concurrentBusyInstances: [B3],
    });
    const d = diagnose([...solo, shared], [ready(B1)], { now: 9000, thresholdMs: 300 });
    expect(d.findings.map((f) => f.requestId)).toEqual(['shared']);
    const finding = d.findings[0]!;
    expect(finding.cause).toBe('shared_gpu');
    expect(finding.evidence).toMatchObject({ soloSamples: 3, soloServiceMs: 225, confirmed: true, busyInstances: [{ instanceId: B3, fastSynch: false }] });
    expect(finding.evidence.slowdown as number).toBeCloseTo(385 / 225, 2);
    expect(d.soloReference.find((s) => s.model === 'sim/llama-3.2-1b')).toEqual({ model: 'sim/llama-3.2-1b', samples: 3, medianTtftMs: 230 });
  });

  it('calls it own prefill when the model ran at its solo speed although another runner was busy', () => {
    const solo = tl({ requestId: 'solo', instanceId: B3, arrivedAt: 0, promptTokens: 3000, acknowledgedAt: 5, firstTokenAt: 1905, endedAt: 2000 });
    const busy = tl({
      requestId: 'busy',
      instanceId: B3,
      arrivedAt: 5000,
      promptTokens: 3000,
      acknowledgedAt: 5005,
      firstTokenAt: 6950,
      endedAt: 7000,
      concurrentBusyInstances: [B1],
    });
    const finding = diagnose([solo, busy], [], { now: 9000 }).findings.find((f) => f.requestId === 'busy')!;
    expect(finding.cause).toBe('own_prefill');
  });

  it('does not blame the GPU for a long prompt that overlapped another runner only briefly', () => {
    const long = { ...longPrefill, concurrentBusyInstances: [B1] };
    const brief = tl({ requestId: 'brief', instanceId: B1, arrivedAt: 3500, acknowledgedAt: 3580, firstTokenAt: 3900, endedAt: 4000 });
    const finding = diagnose([long, brief], [], { now: 30_000 }).findings.find((f) => f.requestId === 'long')!;
    expect(finding.cause).toBe('own_prefill');
    expect(finding.evidence.sharedFraction as number).toBeLessThan(0.05);
  });

  it('flags a dispatch delay with a ready runner as a node bug, with the blocking-loop signature', () => {
    // exo's worker before its fix: the 1B task waits until the queued 3B task is acknowledged.
    const queued3b = tl({ requestId: 'queued3b', instanceId: B3, arrivedAt: 3000, acknowledgedAt: 19_030, firstTokenAt: 19_100, endedAt: 19_400 });
    const short1b = tl({
      requestId: 'short1b',
      instanceId: B1,
      arrivedAt: 3500,
      dispatchedAt: 19_031,
      acknowledgedAt: 19_035,
      firstTokenAt: 19_300,
      endedAt: 19_400,
    });
    const d = diagnose([longPrefill, queued3b, short1b], [ready(B1), ready(B3)], { now: 30_000 });
    const finding = d.findings.find((f) => f.requestId === 'short1b')!;
    expect(finding.cause).toBe('node_dispatch_delay');
    expect(finding.bugToReport).toBe(true);
    expect(finding.explanation).toMatch(/bug/);
    const blockers = finding.evidence.otherRunnersAwaitingAck as Array<{ requestId: string; acknowledgedBeforeDispatchMs: number }>;
    expect(blockers[0]).toMatchObject({ requestId: 'queued3b', acknowledgedBeforeDispatchMs: 1 });
  });

  it('does not blame the node for waiting while the runner was starting', () => {
    const events: NodeEvent[] = [
      { t: 0, kind: 'runner_status', instanceId: B1, data: { status: { kind: 'RunnerLoading', layersLoaded: 3, totalLayers: 16 } } },
      { t: 1500, kind: 'runner_status', instanceId: B1, data: { status: { kind: 'RunnerReady' } } },
    ];
    const early = tl({ requestId: 'early', instanceId: B1, arrivedAt: 100, dispatchedAt: 1501, acknowledgedAt: 1505, firstTokenAt: 1700, endedAt: 1800 });
    const finding = diagnose([early], events, { now: 5000 }).findings[0]!;
    expect(finding.cause).toBe('waiting_for_runner');
    expect(finding.bugToReport).toBe(false);
    expect(finding.evidence.runnerStatuses).toEqual(expect.arrayContaining(['RunnerLoading', 'RunnerReady']));
  });

  it('reports a request the watchdog ended, with the watchdog\u2019s numbers, even when short', () => {
    const hung = tl({ requestId: 'hung', instanceId: B1, arrivedAt: 100, acknowledgedAt: 105, endedAt: 700, outcome: 'failed' });
    const events: NodeEvent[] = [
      ready(B1),
      { t: 650, kind: 'watchdog_fired', instanceId: B1, data: { phase: 'prefill', silentMs: 540, deadlineMs: 500 } },
      { t: 700, kind: 'request_failed', instanceId: B1, requestId: 'hung', data: { completionTokens: 0, code: 'runner_stuck', reason: 'runner stuck' } },
      {
        t: 720,
        kind: 'runner_exited',
        instanceId: B1,
        data: { cause: 'stuck', code: null, signal: 'SIGTERM', reason: 'runner stuck: no output for 0.5 s during prefill (watchdog deadline 0.5 s)' },
      },
    ];
    const d = diagnose([hung], events, { now: 5000 });
    expect(d.findings).toHaveLength(1);
    expect(d.findings[0]).toMatchObject({ cause: 'runner_stuck', ttftMs: null, evidence: { watchdogPhase: 'prefill', silentMs: 540, exitSignal: 'SIGTERM' } });
    expect(d.runnerIncidents.map((i) => i.kind)).toEqual(['watchdog', 'exit']);
  });

  it('says when the stuck runner was not relaunched, from the supervisor\u2019s state events', () => {
    const hung = tl({ requestId: 'hung', instanceId: B1, arrivedAt: 100, acknowledgedAt: 105, endedAt: 700, outcome: 'failed' });
    const advice = 'the runner was stuck with fast synch on: the GPU may be wedged: quit exobar, and reboot if models stay stuck';
    const events: NodeEvent[] = [
      ready(B1),
      { t: 650, kind: 'watchdog_fired', instanceId: B1, data: { phase: 'prefill', silentMs: 5400, deadlineMs: 5000 } },
      { t: 700, kind: 'request_failed', instanceId: B1, requestId: 'hung', data: { completionTokens: 0, code: 'runner_stuck', reason: 'runner stuck' } },
      { t: 720, kind: 'runner_exited', instanceId: B1, data: { cause: 'stuck', code: null, signal: 'SIGKILL', reason: 'runner stuck' } },
      { t: 721, kind: 'runner_state', instanceId: B1, data: { from: 'running', to: 'needs_attention', reason: advice } },
    ];
    const [finding] = diagnose([hung], events, { now: 5000 }).findings;
    expect(finding!.evidence).toMatchObject({ deadlineMs: 5000, runnerStateAfter: { state: 'needs_attention', reason: advice } });
    expect(finding!.explanation).toContain(`It was not relaunched: ${advice}.`);
    expect(finding!.explanation).toContain('(its deadline: ');
  });

  it('reports a crash as a crash', () => {
    const crashed = tl({ requestId: 'c', instanceId: B1, arrivedAt: 0, firstTokenAt: 200, endedAt: 210, outcome: 'failed' });
    const events: NodeEvent[] = [
      { t: 205, kind: 'runner_exited', instanceId: B1, data: { cause: 'crashed', code: 1, signal: null, reason: 'runner crashed (exit code 1)' } },
      {
        t: 210,
        kind: 'request_failed',
        instanceId: B1,
        requestId: 'c',
        data: { completionTokens: 0, code: 'runner_crashed', reason: 'runner crashed (exit code 1)' },
      },
    ];
    expect(diagnose([crashed], events, { now: 500 }).findings[0]).toMatchObject({ cause: 'runner_crashed', evidence: { exitCode: 1 } });
  });

  it('examines a TTFT under the absolute threshold when it is several times the solo median', () => {
    const solo = [0, 1, 2].map((i) =>
      tl({ requestId: `s${i}`, instanceId: B1, arrivedAt: i * 1000, acknowledgedAt: i * 1000 + 5, firstTokenAt: i * 1000 + 230 }),
    );
    const slow = tl({ requestId: 'slow', instanceId: B1, arrivedAt: 5000, acknowledgedAt: 5005, firstTokenAt: 5800, concurrentBusyInstances: [B3] });
    const fine = tl({ requestId: 'fine', instanceId: B1, arrivedAt: 6000, acknowledgedAt: 6005, firstTokenAt: 6300, concurrentBusyInstances: [B3] });
    const d = diagnose([...solo, slow, fine], [], { now: 9000 });
    expect(d.findings.map((f) => f.requestId)).toEqual(['slow']);
    expect(d.findings[0]!.cause).toBe('shared_gpu');
  });

  it('mentions fast synch when a runner involved in GPU sharing has it on', () => {
    const shared = tl({ requestId: 'x', instanceId: B1, arrivedAt: 0, acknowledgedAt: 5, firstTokenAt: 2000, concurrentBusyInstances: [B3] });
    const events: NodeEvent[] = [{ t: 0, kind: 'runner_hello', instanceId: B3, data: { fastSynch: true, engine: 'sim', decided: true } }];
    const d = diagnose([shared], events, { now: 3000 });
    expect(d.fastSynchOn).toEqual([B3]);
    expect(d.findings[0]).toMatchObject({ cause: 'shared_gpu', evidence: { confirmed: false } });
    expect(d.findings[0]!.explanation).toMatch(/Fast synch is on/);
  });
});
