/**
 * The runner-protocol conformance suite: one set of behaviours every runner engine must
 * show (docs/runner-protocol.md), run against real child processes. Engine-agnostic:
 * a runner joins by adding a `*.test.ts` that calls {@link describeRunnerConformance}
 * with its {@link RunnerConformanceProfile}.
 *
 * The cases that matter most for the supervisor come from exo's engine: a runner reads
 * tasks only between generation steps and acknowledges every task it reads (so an ack can
 * take as long as a whole prefill, never longer than one step); it admits at most one
 * task per step, tasks beyond the batch wait in a queue inside the runner and a cancel
 * removes them from it at once; and it drops a cancel for a task it has not read (so the
 * supervisor must hold cancels until the ack).
 *
 * Every case runs under both schedules (`--schedule exo` and `interleaved`,
 * docs/runner-protocol.md, "Schedules"); where they differ the case asserts each one's
 * behaviour: under `interleaved` a task is acknowledged within a step even while a long
 * prompt prefills, prefill chunks are sized from the measured rate (at most 4096 tokens),
 * and a cancel written right after its task is applied, not dropped.
 */
import { describe, expect, it } from 'vitest';
import {
  effectiveFastSynch,
  FAULT_PROMPTS,
  PROTOCOL_VERSION,
  type Chunk,
  type RunnerSchedule,
  type Hello,
  type RunnerInput,
  type RunnerOutput,
  type TaskStatus,
} from '../../../shared/runner-protocol';
import { countPromptTokens, makePrompt } from '../../../shared/token-count';
import { useRunnerProcessCleanup } from '../runner-cleanup';
import type { ReceivedMessage, RunnerProcess } from '../runner-under-test';
import { sleep } from '../eventually';
import { conformanceRunners, conformanceTimeouts, isStatus, type RunnerConformanceProfile } from './conformance-runner';

/** exo's prefill chunk size: progress events come every this many prompt tokens. */
export const PREFILL_CHUNK_TOKENS = 4096;
/** exo's batch size: requests that decode together at most. */
export const MAX_CONCURRENT_REQUESTS = 8;

type Received = ReceivedMessage;
type ChunkOf<K extends Chunk['kind']> = Extract<Chunk, { kind: K }>;

const TERMINAL: readonly TaskStatus[] = ['Complete', 'Failed', 'Cancelled', 'TimedOut'];

const isAck = (taskId: string) => (m: RunnerOutput) => m.type === 'TaskAcknowledged' && m.taskId === taskId;
const isTerminal = (taskId: string) => (m: RunnerOutput) => m.type === 'TaskStatusUpdated' && m.taskId === taskId && TERMINAL.includes(m.status);
const isRunnerStatus = (kind: string) => (m: RunnerOutput) => m.type === 'RunnerStatusUpdated' && m.status.kind === kind;
const isChunk = (commandId: string, kind?: Chunk['kind']) => (m: RunnerOutput) =>
  m.type === 'ChunkGenerated' && m.commandId === commandId && (kind === undefined || m.chunk.kind === kind);

const commandIdOf = (taskId: string) => `cmd-${taskId}`;

/** A TextGeneration task; its commandId is derived from the task id. */
export function generationTask(
  taskId: string,
  options: { promptTokens?: number; content?: string; maxTokens: number | null; seed?: number | null; stop?: string[] },
): Extract<RunnerInput, { kind: 'TextGeneration' }> {
  const messages =
    options.content !== undefined
      ? [{ role: 'user' as const, content: options.content }]
      : makePrompt(options.promptTokens ?? 20, `unique-${taskId}-${Math.random().toString(36).slice(2)}`);
  return {
    kind: 'TextGeneration',
    taskId,
    commandId: commandIdOf(taskId),
    params: { messages, maxTokens: options.maxTokens, temperature: null, seed: options.seed ?? null, ...(options.stop ? { stop: options.stop } : {}) },
  };
}

function chunks<K extends Chunk['kind']>(runner: RunnerProcess, commandId: string, kind: K): (Received & { chunk: ChunkOf<K> })[] {
  const out: (Received & { chunk: ChunkOf<K> })[] = [];
  for (const r of runner.received) {
    if (r.message.type === 'ChunkGenerated' && r.message.commandId === commandId && r.message.chunk.kind === kind) {
      out.push({ ...r, chunk: r.message.chunk as ChunkOf<K> });
    }
  }
  return out;
}

/**
 * Registers the conformance cases for one runner engine under `describe(label)`.
 * Every case spawns its own runner(s) and kills them afterwards.
 */
export function describeRunnerConformance(label: string, profile: RunnerConformanceProfile): void {
  for (const schedule of ['exo', 'interleaved'] as const) describeUnderSchedule(label, profile, schedule);
}

/** Checks a run of prefill progress: increasing, ending at the total, in exo's 4096-token chunks or (interleaved) chunks of at most that. */
function expectChunks(reported: number[], total: number, schedule: RunnerSchedule): void {
  // The 0-token report when its prefill begins (its turn in the runner), then one per chunk.
  expect(reported[0]).toBe(0);
  const processed = reported.slice(1);
  if (schedule === 'exo') {
    const expected: number[] = [];
    for (let p = PREFILL_CHUNK_TOKENS; p < total; p += PREFILL_CHUNK_TOKENS) expected.push(p);
    expect(processed).toEqual([...expected, total]);
    return;
  }
  expect(processed.at(-1)).toBe(total);
  processed.forEach((p, i) => {
    const size = p - (i > 0 ? processed[i - 1]! : 0);
    expect(size).toBeGreaterThan(0);
    expect(size).toBeLessThanOrEqual(PREFILL_CHUNK_TOKENS);
  });
}

function describeUnderSchedule(label: string, profile: RunnerConformanceProfile, schedule: RunnerSchedule): void {
  const timeouts = conformanceTimeouts(profile, 4);
  const { start: startTimeout, lifecycle: lifecycleTimeout, generation: generationTimeout, long: longTimeout, case: caseTimeout } = timeouts;
  const hangSilence = profile.hangSilenceMs ?? 1000;

  if (profile.longPromptTokens <= 3 * PREFILL_CHUNK_TOKENS) {
    throw new Error(`${label}: longPromptTokens must exceed ${3 * PREFILL_CHUNK_TOKENS} (four prefill chunks)`);
  }

  const { start, startReady } = conformanceRunners(profile, timeouts, schedule);

  /** Fails a timing-dependent case whose lines reached the runner too late to test anything. */
  function expectWrittenBefore(runner: RunnerProcess, sentIndex: number, event: Received, what: string): void {
    const sent = runner.sent[sentIndex];
    expect(sent, 'the line was written').toBeDefined();
    if (sent && sent.at >= event.at) {
      throw new Error(
        `${label}: inconclusive: ${what} was written after the long prefill had ended; ` + 'raise longPromptTokens so that one prefill chunk takes longer',
      );
    }
  }

  /** Sends the suite's long prompt as task `taskId` and returns once its prefill has begun: lines written now land inside it. */
  async function startLongPrefill(runner: RunnerProcess, taskId: string, maxTokens: number): Promise<void> {
    runner.send(generationTask(taskId, { promptTokens: profile.longPromptTokens, maxTokens }));
    await runner.waitFor(isChunk(commandIdOf(taskId), 'PrefillProgressChunk'), longTimeout);
  }

  /**
   * A ready runner inside the long prefill of task `long`, with two short tasks (`second`,
   * `third`) written into it. `expectLongDone`, once they have ended, checks the long
   * prompt was prefilled whole and returns its last progress event; it fails the case as
   * inconclusive if `third` reached the runner after that event.
   */
  async function twoTasksDuringLongPrefill(): Promise<{ runner: RunnerProcess; expectLongDone: () => Received & { chunk: ChunkOf<'PrefillProgressChunk'> } }> {
    const runner = await startReady();
    await startLongPrefill(runner, 'long', 2);
    const sentSecond = runner.sent.length;
    runner.send(generationTask('second', { promptTokens: 20, maxTokens: 2 }));
    runner.send(generationTask('third', { promptTokens: 20, maxTokens: 2 }));
    const expectLongDone = () => {
      const longDone = chunks(runner, 'cmd-long', 'PrefillProgressChunk').at(-1)!;
      expect(longDone.chunk.processedTokens).toBe(profile.longPromptTokens);
      expectWrittenBefore(runner, sentSecond + 1, longDone, 'the third task');
      return longDone;
    };
    return { runner, expectLongDone };
  }

  /** Every one of `taskIds` reported Complete. */
  function expectCompleted(runner: RunnerProcess, taskIds: string[]): void {
    for (const taskId of taskIds) expect(runner.messages.some(isStatus(taskId, 'Complete'))).toBe(true);
  }

  describe(`runner conformance: ${label} (schedule ${schedule})`, () => {
    useRunnerProcessCleanup();

    it(
      'sends the hello first (then RunnerIdle), reporting the fast-synch environment it sees and the value MLX will use',
      async () => {
        const cases: { env: { MLX_METAL_FAST_SYNCH?: string; EXO_FAST_SYNCH?: string }; fastSynch: boolean }[] = [
          { env: {}, fastSynch: false },
          { env: { MLX_METAL_FAST_SYNCH: '0' }, fastSynch: false },
          { env: { MLX_METAL_FAST_SYNCH: '1' }, fastSynch: true },
          // MLX parses the variable as an integer: "true" counts as 0.
          { env: { MLX_METAL_FAST_SYNCH: 'true' }, fastSynch: false },
          // exo's bootstrap: EXO_FAST_SYNCH overrides, "false" off and anything else on.
          { env: { MLX_METAL_FAST_SYNCH: '1', EXO_FAST_SYNCH: 'false' }, fastSynch: false },
          { env: { MLX_METAL_FAST_SYNCH: '0', EXO_FAST_SYNCH: 'true' }, fastSynch: true },
        ];
        // Started together: only the first lines matter here, and startup dominates.
        const runners = await Promise.all(cases.map((c) => start(c.env)));
        await Promise.all(runners.map((r) => r.waitFor(isRunnerStatus('RunnerIdle'), startTimeout)));
        runners.forEach((runner, i) => {
          const c = cases[i]!;
          const env = { MLX_METAL_FAST_SYNCH: c.env.MLX_METAL_FAST_SYNCH ?? null, EXO_FAST_SYNCH: c.env.EXO_FAST_SYNCH ?? null };
          expect(effectiveFastSynch(env)).toBe(c.fastSynch);
          expect(runner.badLines).toEqual([]);
          const [helloLine, idle] = runner.messages;
          // `features` is optional (absent: neither); where a runner says it, both are booleans.
          const { features, ...hello } = helloLine as Hello;
          if (features !== undefined) expect(features).toEqual({ tools: expect.any(Boolean) as unknown, structuredOutput: expect.any(Boolean) as unknown });
          expect(hello).toEqual({
            type: 'Hello',
            protocolVersion: PROTOCOL_VERSION,
            engine: profile.engine,
            model: profile.model,
            pid: runner.pid,
            env,
            fastSynch: c.fastSynch,
            schedule,
            // Started without --prompt-cache-bytes: no cache; whether the family could have one is the runner's to say.
            promptCache: { capBytes: 0, supported: expect.any(Boolean), reason: hello?.type === 'Hello' && hello.promptCache?.supported === false ? expect.any(String) : null },
          });
          expect(idle).toEqual({ type: 'RunnerStatusUpdated', status: { kind: 'RunnerIdle' } });
        });
      },
      startTimeout * 2,
    );

    it(
      'goes Idle → Loading (layers monotonic) → Loaded → WarmingUp → Ready, acknowledging each lifecycle task',
      async () => {
        const runner = await startReady();
        const statuses = runner.messages.flatMap((m) => (m.type === 'RunnerStatusUpdated' ? [m.status] : []));
        const kinds = statuses.map((s) => s.kind).filter((k, i, all) => k !== all[i - 1]);
        expect(kinds).toEqual(['RunnerIdle', 'RunnerLoading', 'RunnerLoaded', 'RunnerWarmingUp', 'RunnerReady']);
        const loading = statuses.flatMap((s) => (s.kind === 'RunnerLoading' ? [s] : []));
        expect(loading.length).toBeGreaterThanOrEqual(2);
        const totalLayers = loading[0]!.totalLayers;
        for (let i = 0; i < loading.length; i++) {
          expect(loading[i]!.totalLayers).toBe(totalLayers);
          if (i > 0) expect(loading[i]!.layersLoaded).toBeGreaterThanOrEqual(loading[i - 1]!.layersLoaded);
        }
        expect(loading.at(-1)!.layersLoaded).toBe(totalLayers);

        const order = (pred: (m: RunnerOutput) => boolean) => runner.messages.findIndex(pred);
        for (const [taskId, first, last] of [
          ['load', 'RunnerLoading', 'RunnerLoaded'],
          ['warmup', 'RunnerWarmingUp', 'RunnerReady'],
        ] as const) {
          const ack = order(isAck(taskId));
          const running = order(isStatus(taskId, 'Running'));
          const complete = order(isStatus(taskId, 'Complete'));
          expect(ack).toBeGreaterThan(0);
          expect(running).toBeGreaterThan(ack);
          expect(order(isRunnerStatus(first))).toBeGreaterThan(running);
          expect(complete).toBeGreaterThan(order(isRunnerStatus(last)));
        }
        expect(runner.badLines).toEqual([]);
      },
      caseTimeout,
    );

    it(
      'generates in order: ack, Running, prefill progress per 4096 tokens ending at the total, tokens, final chunk with usage and stats, Complete',
      async () => {
        const runner = await startReady();
        const from = runner.received.length;
        const promptTokens = 2 * PREFILL_CHUNK_TOKENS + 500;
        const task = generationTask('gen', { promptTokens, maxTokens: 5 });
        expect(countPromptTokens(task.params.messages)).toBe(promptTokens);
        runner.send(task);
        const done = await runner.waitFor(isTerminal('gen'), longTimeout, { from });
        expect(done.message).toMatchObject({ status: 'Complete' });

        const ack = runner.received.findIndex((r) => isAck('gen')(r.message));
        const running = runner.received.findIndex((r) => isStatus('gen', 'Running')(r.message));
        const runnerRunning = runner.received.findIndex((r, i) => i >= from && isRunnerStatus('RunnerRunning')(r.message));
        const firstChunk = runner.received.findIndex((r) => isChunk('cmd-gen')(r.message));
        expect(ack).toBeGreaterThanOrEqual(from);
        expect(running).toBeGreaterThan(ack);
        expect(runnerRunning).toBeGreaterThan(ack);
        expect(firstChunk).toBeGreaterThan(Math.max(running, runnerRunning));

        const progress = chunks(runner, 'cmd-gen', 'PrefillProgressChunk');
        expectChunks(
          progress.map((p) => p.chunk.processedTokens),
          promptTokens,
          schedule,
        );
        expect(progress.every((p) => p.chunk.totalTokens === promptTokens)).toBe(true);

        const tokens = chunks(runner, 'cmd-gen', 'TokenChunk');
        expect(tokens).toHaveLength(5);
        expect(tokens[0]!.index).toBeGreaterThan(progress.at(-1)!.index);
        expect(tokens.slice(0, -1).every((t) => t.chunk.finishReason === null && t.chunk.usage === null)).toBe(true);
        const last = tokens.at(-1)!.chunk;
        expect(last.finishReason).toBe('length');
        expect(last.usage).toEqual({ promptTokens, completionTokens: 5 });
        expect(last.stats).toMatchObject({ promptTokens, generationTokens: 5 });
        expect(last.stats!.promptTps).toBeGreaterThan(0);
        expect(last.stats!.generationTps).toBeGreaterThan(0);
        expect(last.stats!.peakMemoryBytes).toBeGreaterThan(0);
        expect(done.index).toBeGreaterThan(tokens.at(-1)!.index);
        expect(chunks(runner, 'cmd-gen', 'ErrorChunk')).toEqual([]);
        await runner.waitFor(isRunnerStatus('RunnerReady'), generationTimeout, { from: done.index });

        // With no token limit the model stops on its own.
        const natural = generationTask('natural', { promptTokens: 20, maxTokens: null });
        runner.send(natural);
        await runner.waitFor(isStatus('natural', 'Complete'), generationTimeout);
        const naturalTokens = chunks(runner, 'cmd-natural', 'TokenChunk');
        expect(naturalTokens.length).toBeGreaterThan(0);
        const naturalEnd = profile.naturalEnd ?? 'stop';
        expect(naturalTokens.at(-1)!.chunk.finishReason).toBe(naturalEnd === 'stop' ? 'stop' : 'length');
        if (naturalEnd !== 'stop') expect(naturalTokens).toHaveLength(naturalEnd.length);
        expect(naturalTokens.at(-1)!.chunk.usage).toEqual({ promptTokens: 20, completionTokens: naturalTokens.length });
        expect(runner.badLines).toEqual([]);
      },
      caseTimeout,
    );

    const stopCase = 'ends at the first stop sequence (which is not sent, even across tokens) with finish "stop"';
    if (profile.stopSequences !== 'supported') {
      it.skip(`${stopCase} — not implemented: ${profile.stopSequences.unsupportedBecause}`, () => {});
    } else {
      it(
        stopCase,
        async () => {
          const runner = await startReady();
          const textOf = (commandId: string) =>
            chunks(runner, commandId, 'TokenChunk')
              .map((t) => t.chunk.text)
              .join('');
          // The same seed gives the same tokens: first the whole answer, then with a stop string from its middle.
          runner.send(generationTask('free', { promptTokens: 20, maxTokens: 30, seed: 11 }));
          await runner.waitFor(isStatus('free', 'Complete'), generationTimeout);
          const words = chunks(runner, 'cmd-free', 'TokenChunk').map((t) => t.chunk.text);
          const full = words.join('');
          // From the last letter of the 6th token into the 7th: a stop string that spans two tokens.
          const start = words.slice(0, 6).join('').length - 1;
          const stop = full.slice(start, start + 3);
          const expected = full.slice(0, full.indexOf(stop));

          runner.send(generationTask('stopped', { promptTokens: 20, maxTokens: 30, seed: 11, stop: ['never appears', stop] }));
          await runner.waitFor(isStatus('stopped', 'Complete'), generationTimeout);
          const stopped = chunks(runner, 'cmd-stopped', 'TokenChunk');
          expect(textOf('cmd-stopped')).toBe(expected);
          expect(stopped.slice(0, -1).every((t) => t.chunk.finishReason === null)).toBe(true);
          const last = stopped.at(-1)!.chunk;
          expect(last.finishReason).toBe('stop');
          expect(last.usage!.completionTokens).toBe(stopped.length);
          expect(stopped.length).toBeLessThan(30);

          // A stop string that never occurs changes nothing.
          runner.send(generationTask('absent', { promptTokens: 20, maxTokens: 30, seed: 11, stop: ['never appears'] }));
          await runner.waitFor(isStatus('absent', 'Complete'), generationTimeout);
          expect(textOf('cmd-absent')).toBe(full);
          expect(chunks(runner, 'cmd-absent', 'TokenChunk').at(-1)!.chunk.finishReason).toBe('length');
          expect(runner.badLines).toEqual([]);
        },
        caseTimeout,
      );
    }

    if (schedule === 'exo') {
    it(
      'acknowledges every task read between steps, and admits at most one per step: an ack waits for the running prefill',
      async () => {
        const { runner, expectLongDone } = await twoTasksDuringLongPrefill();
        await runner.waitFor(isTerminal('third'), longTimeout);
        await runner.waitFor(isTerminal('second'), longTimeout);

        const longDone = expectLongDone();
        const ackSecond = runner.received.find((r) => isAck('second')(r.message))!;
        const ackThird = runner.received.find((r) => isAck('third')(r.message))!;
        // Both were waiting in the runner's stdin during the long prefill; neither was acknowledged then.
        expect(ackSecond.index).toBeGreaterThan(longDone.index);
        // Both were read at the same step boundary, so both are acknowledged before either is admitted.
        const secondPrefill = chunks(runner, 'cmd-second', 'PrefillProgressChunk');
        const thirdPrefill = chunks(runner, 'cmd-third', 'PrefillProgressChunk');
        expect(ackThird.index).toBeLessThan(secondPrefill[0]!.index);
        // The second's whole prefill is in the step that admitted it; the third's prefill waits for the next step.
        const secondPrefillDone = secondPrefill.at(-1)!;
        expect(secondPrefillDone.chunk.processedTokens).toBe(secondPrefillDone.chunk.totalTokens);
        expect(thirdPrefill[0]!.index).toBeGreaterThan(secondPrefillDone.index);
        // A step ends with a decode step, so a token always separates two admissions.
        const tokenBetween = (from: number, to: number) =>
          runner.received.slice(from + 1, to).some((r) => r.message.type === 'ChunkGenerated' && r.message.chunk.kind === 'TokenChunk');
        expect(tokenBetween(longDone.index, secondPrefill[0]!.index), 'a decode step between the long prefill and the second admission').toBe(true);
        expect(tokenBetween(secondPrefillDone.index, thirdPrefill[0]!.index), 'a decode step between the second and third admission').toBe(true);
        expectCompleted(runner, ['long', 'second', 'third']);
      },
      caseTimeout,
    );
    } else {
    it(
      'interleaved: a task written during a long prefill is acknowledged within a step and admitted at once; the long prompt still completes',
      async () => {
        const { runner, expectLongDone } = await twoTasksDuringLongPrefill();
        const ackThird = await runner.waitFor(isAck('third'), longTimeout);
        await runner.waitFor(isTerminal('long'), longTimeout);
        await runner.waitFor(isTerminal('second'), longTimeout);
        await runner.waitFor(isTerminal('third'), longTimeout);
        const longDone = expectLongDone();
        const ackSecond = runner.received.find((r) => isAck('second')(r.message))!;
        // Both read at a step boundary inside the long prefill, not after it (exo's schedule waits for its end).
        expect(ackSecond.index).toBeLessThan(longDone.index);
        expect(ackThird.index).toBeLessThan(longDone.index);
        expectCompleted(runner, ['long', 'second', 'third']);
      },
      caseTimeout,
    );
    }

    it(
      'a task beyond a full batch is acknowledged within one step and waits in the runner; its cancel removes it at once',
      async () => {
        const runner = await startReady();
        const ids = Array.from({ length: MAX_CONCURRENT_REQUESTS }, (_, i) => `full-${i}`);
        for (const id of ids) runner.send(generationTask(id, { promptTokens: 20, maxTokens: 100_000 }));
        for (const id of ids) {
          await runner.waitFor(isChunk(commandIdOf(id), 'TokenChunk'), longTimeout, { description: `a token of ${id}` });
        }
        const sentExtra = runner.sent.length;
        runner.send(generationTask('extra', { promptTokens: 20, maxTokens: 3 }));
        const ack = await runner.waitFor(isAck('extra'), generationTimeout);
        // Read at the next step boundary, while all eight still decode (none can finish: 100 000 tokens each).
        // Batch members emit one token per step. Counted from this side, the steps include those
        // that pass while the line crosses the pipes and this process gets the CPU back: a few
        // on an idle machine, 35 measured beside two busy loops (steps of a few ms). A runner that
        // read its tasks only at some coarser boundary would show hundreds.
        const sentAt = runner.sent[sentExtra]!.at;
        const stepsBeforeAck = chunks(runner, commandIdOf(ids[0]!), 'TokenChunk').filter((c) => c.at > sentAt && c.index < ack.index).length;
        expect(stepsBeforeAck).toBeLessThanOrEqual(100);
        expect(runner.messages.slice(0, ack.index).some((m) => ids.some((id) => isTerminal(id)(m)))).toBe(false);
        runner.send({ kind: 'CancelTask', cancelledTaskId: 'extra' });
        const cancelled = await runner.waitFor(isTerminal('extra'), generationTimeout);
        expect(cancelled.message).toMatchObject({ status: 'Cancelled' });
        // Never admitted: no prefill, a final chunk with no completion tokens, and well before the next cancel check.
        expect(chunks(runner, 'cmd-extra', 'PrefillProgressChunk')).toEqual([]);
        expect(chunks(runner, 'cmd-extra', 'TokenChunk').map((c) => c.chunk)).toEqual([
          expect.objectContaining({ finishReason: 'cancelled', usage: { promptTokens: expect.any(Number), completionTokens: 0 } }),
        ]);
        const stepsToCancel = chunks(runner, commandIdOf(ids[0]!), 'TokenChunk').filter((c) => c.index > ack.index && c.index < cancelled.index).length;
        // Counted from this side like the steps before the acknowledgement (54 measured at load 17):
        // a waiting task's cancel must not wait for the next periodic check (exo's is every 100 steps).
        expect(stepsToCancel).toBeLessThan(100);
        for (const id of ids) runner.send({ kind: 'CancelTask', cancelledTaskId: id });
        for (const id of ids) await runner.waitFor(isTerminal(id), generationTimeout);
        expect(runner.exit).toBeNull();
      },
      caseTimeout,
    );

    it(
      "cancels an admitted task at the next check: finish 'cancelled' with usage, then Cancelled",
      async () => {
        const runner = await startReady();
        // During prefill: checked at the next chunk boundary.
        await startLongPrefill(runner, 'in-prefill', 10);
        runner.send({ kind: 'CancelTask', cancelledTaskId: 'in-prefill' });
        const cancelled = await runner.waitFor(isTerminal('in-prefill'), longTimeout);
        expect(cancelled.message).toMatchObject({ status: 'Cancelled' });
        const progress = chunks(runner, 'cmd-in-prefill', 'PrefillProgressChunk');
        expect(progress.at(-1)!.chunk.processedTokens).toBeLessThan(profile.longPromptTokens);
        const tokens = chunks(runner, 'cmd-in-prefill', 'TokenChunk');
        expect(tokens).toHaveLength(1);
        expect(tokens[0]!.chunk).toMatchObject({
          finishReason: 'cancelled',
          usage: { promptTokens: profile.longPromptTokens, completionTokens: 0 },
        });
        expect(tokens[0]!.index).toBeLessThan(cancelled.index);

        // During decode: checked every ~100 steps.
        runner.send(generationTask('in-decode', { promptTokens: 20, maxTokens: 100_000 }));
        await runner.waitFor(() => chunks(runner, 'cmd-in-decode', 'TokenChunk').length >= 5, generationTimeout, { description: 'five tokens' });
        runner.send({ kind: 'CancelTask', cancelledTaskId: 'in-decode' });
        const decodeCancelled = await runner.waitFor(isTerminal('in-decode'), generationTimeout);
        expect(decodeCancelled.message).toMatchObject({ status: 'Cancelled' });
        const decodeTokens = chunks(runner, 'cmd-in-decode', 'TokenChunk');
        const final = decodeTokens.at(-1)!.chunk;
        expect(final.finishReason).toBe('cancelled');
        expect(final.usage).toEqual({ promptTokens: 20, completionTokens: decodeTokens.length - 1 });
        expect(final.usage!.completionTokens).toBeGreaterThanOrEqual(5);

        // The runner carries on.
        await runner.waitFor(isRunnerStatus('RunnerReady'), generationTimeout, { from: decodeCancelled.index });
        runner.send(generationTask('after', { promptTokens: 20, maxTokens: 3 }));
        await runner.waitFor(isStatus('after', 'Complete'), generationTimeout);
      },
      caseTimeout,
    );

    if (schedule === 'exo') {
    it(
      'drops a cancel for a task it has not admitted yet: that task runs to completion',
      async () => {
        const runner = await startReady();
        await startLongPrefill(runner, 'long', 2);
        runner.send(generationTask('queued', { promptTokens: 20, maxTokens: 3 }));
        const cancelSent = runner.sent.length;
        runner.send({ kind: 'CancelTask', cancelledTaskId: 'queued' });
        const done = await runner.waitFor(isTerminal('queued'), longTimeout);
        const longDone = chunks(runner, 'cmd-long', 'PrefillProgressChunk').at(-1)!;
        expectWrittenBefore(runner, cancelSent, longDone, 'the cancel');
        expect(done.message).toMatchObject({ status: 'Complete' });
        const tokens = chunks(runner, 'cmd-queued', 'TokenChunk');
        expect(tokens).toHaveLength(3);
        expect(tokens.at(-1)!.chunk.finishReason).toBe('length');
        expect(runner.exit).toBeNull();
      },
      caseTimeout,
    );
    } else {
    it(
      'interleaved: a cancel written right after its task, during a long prefill, is applied: the task ends cancelled',
      async () => {
        const runner = await startReady();
        await startLongPrefill(runner, 'long', 2);
        runner.send(generationTask('queued', { promptTokens: 20, maxTokens: 3 }));
        runner.send({ kind: 'CancelTask', cancelledTaskId: 'queued' });
        const done = await runner.waitFor(isTerminal('queued'), longTimeout);
        // The task is read within a step, so its cancel finds it (exo's schedule drops it: the task was unread).
        expect(done.message).toMatchObject({ status: 'Cancelled' });
        expect(chunks(runner, 'cmd-queued', 'TokenChunk').at(-1)!.chunk.finishReason).toBe('cancelled');
        await runner.waitFor(isStatus('long', 'Complete'), longTimeout);
        expect(runner.exit).toBeNull();
      },
      caseTimeout,
    );
    }

    it(
      `decodes up to ${MAX_CONCURRENT_REQUESTS} requests together, never more`,
      async () => {
        const runner = await startReady();
        const ids = Array.from({ length: MAX_CONCURRENT_REQUESTS + 2 }, (_, i) => `batch-${i}`);
        // In one write: the claim below (every task acknowledged before the first one finished)
        // is about when the runner reads what has arrived, not about when the pipe delivers it.
        runner.sendAll(ids.map((id) => generationTask(id, { promptTokens: 20, maxTokens: 40 })));
        for (const id of ids) await runner.waitFor(isTerminal(id), longTimeout);

        // Admission is the first prefill progress of a request.
        let inFlight = 0;
        let maxInFlight = 0;
        let firstComplete = -1;
        const admitted = new Set<string>();
        for (const r of runner.received) {
          const m = r.message;
          const id = m.type === 'ChunkGenerated' ? m.commandId.replace(/^cmd-/, '') : null;
          if (m.type === 'ChunkGenerated' && m.chunk.kind === 'PrefillProgressChunk' && id && ids.includes(id) && !admitted.has(id)) {
            admitted.add(id);
            maxInFlight = Math.max(maxInFlight, ++inFlight);
          }
          if (m.type === 'TaskStatusUpdated' && ids.includes(m.taskId) && TERMINAL.includes(m.status)) {
            inFlight--;
            if (firstComplete < 0) firstComplete = r.index;
          }
        }
        expect(maxInFlight).toBe(MAX_CONCURRENT_REQUESTS);
        // Before the first request finished, all eight admitted ones were producing tokens
        // (exo's schedule prefills each admitted prompt whole at once). The interleaved one
        // may let the decoding streams run their share between a late prompt's prefill chunks,
        // so a short request can finish first there: eight in flight at once is its claim.
        const producing = new Set(
          runner.received
            .slice(0, firstComplete)
            .flatMap((r) => (r.message.type === 'ChunkGenerated' && r.message.chunk.kind === 'TokenChunk' ? [r.message.commandId] : [])),
        );
        if (schedule === 'exo') expect(producing.size).toBe(MAX_CONCURRENT_REQUESTS);
        else expect(producing.size).toBeGreaterThan(0);
        // Every task, the two beyond the batch included, was acknowledged before the first one finished.
        for (const id of ids) expect(runner.received.findIndex((r) => isAck(id)(r.message))).toBeLessThan(firstComplete);
        expectCompleted(runner, ids);
      },
      caseTimeout,
    );

    it(
      'shuts down: in-flight requests fail with an ErrorChunk, then Complete, RunnerShutdown and exit code 0',
      async () => {
        const runner = await startReady();
        runner.send(generationTask('inflight', { promptTokens: 20, maxTokens: 100_000 }));
        await runner.waitFor(() => chunks(runner, 'cmd-inflight', 'TokenChunk').length >= 3, generationTimeout, {
          description: 'three tokens',
        });
        runner.send({ kind: 'Shutdown', taskId: 'bye' });
        expect(await runner.waitForExit(generationTimeout)).toEqual({ code: 0, signal: null });
        const at = (pred: (m: RunnerOutput) => boolean) => runner.messages.findIndex(pred);
        const ack = at(isAck('bye'));
        const shuttingDown = at(isRunnerStatus('RunnerShuttingDown'));
        const error = at(isChunk('cmd-inflight', 'ErrorChunk'));
        const failed = at(isStatus('inflight', 'Failed'));
        const complete = at(isStatus('bye', 'Complete'));
        const shutdown = at(isRunnerStatus('RunnerShutdown'));
        expect(ack).toBeGreaterThan(0);
        expect(shuttingDown).toBeGreaterThan(ack);
        expect(error).toBeGreaterThan(shuttingDown);
        expect(failed).toBeGreaterThan(error);
        expect(complete).toBeGreaterThan(failed);
        expect(shutdown).toBeGreaterThan(complete);
        expect(runner.messages.at(-1)).toEqual({ type: 'RunnerStatusUpdated', status: { kind: 'RunnerShutdown' } });
      },
      caseTimeout,
    );

    it(
      'ignores malformed stdin lines and keeps serving',
      async () => {
        const runner = await startReady();
        const from = runner.received.length;
        runner.send('this is not json');
        runner.send('{"kind":"Bogus","taskId":"x"}');
        runner.send('{"kind":"TextGeneration","taskId":"bad","commandId":"cmd-bad","params":{"messages":[],"maxTokens":-1}}');
        runner.send('[1,2,3]');
        runner.send(generationTask('good', { promptTokens: 20, maxTokens: 3 }));
        await runner.waitFor(isStatus('good', 'Complete'), generationTimeout);
        expect(runner.messages.slice(from).find((m) => m.type !== 'RunnerStatusUpdated')).toEqual({
          type: 'TaskAcknowledged',
          taskId: 'good',
        });
        expect(runner.messages.some(isAck('x')) || runner.messages.some(isAck('bad'))).toBe(false);
        expect(runner.exit).toBeNull();
        expect(runner.badLines).toEqual([]);
      },
      caseTimeout,
    );

    it(
      'fails a generation sent before the model is ready (ack, ErrorChunk, Failed), stays usable, exits 0 when stdin closes',
      async () => {
        const runner = await start();
        runner.send(generationTask('early', { promptTokens: 20, maxTokens: 3 }));
        const failed = await runner.waitFor(isTerminal('early'), generationTimeout);
        expect(failed.message).toMatchObject({ status: 'Failed' });
        const ack = runner.received.find((r) => isAck('early')(r.message))!;
        const errors = chunks(runner, 'cmd-early', 'ErrorChunk');
        expect(errors).toHaveLength(1);
        expect(errors[0]!.chunk.errorMessage.length).toBeGreaterThan(0);
        expect(ack.index).toBeLessThan(errors[0]!.index);
        expect(errors[0]!.index).toBeLessThan(failed.index);
        expect(chunks(runner, 'cmd-early', 'TokenChunk')).toEqual([]);
        runner.send({ kind: 'LoadModel', taskId: 'load' });
        await runner.waitFor(isStatus('load', 'Complete'), lifecycleTimeout);
        // A supervisor that goes away closes the runner's stdin: the runner exits cleanly.
        runner.closeStdin();
        expect(await runner.waitForExit(generationTimeout)).toEqual({ code: 0, signal: null });
      },
      caseTimeout,
    );

    it(
      'crash fault prompt: admitted, a few tokens, then the process exits with code 1',
      async () => {
        const runner = await startReady();
        runner.send(generationTask('crash', { content: `Please ${FAULT_PROMPTS.crash} now.`, maxTokens: 50 }));
        const exit = await runner.waitForExit(generationTimeout);
        expect(exit).toEqual({ code: 1, signal: null });
        expect(runner.messages.some(isAck('crash'))).toBe(true);
        expect(chunks(runner, 'cmd-crash', 'TokenChunk').length).toBeGreaterThan(0);
        expect(runner.messages.some(isTerminal('crash'))).toBe(false);
      },
      caseTimeout,
    );

    it(
      'hang fault prompt: admitted, then silent and no longer processing, while alive',
      async () => {
        const runner = await startReady();
        runner.send(generationTask('hang', { content: `Please ${FAULT_PROMPTS.hang} now.`, maxTokens: 50 }));
        const ack = await runner.waitFor(isAck('hang'), generationTimeout);
        runner.send(generationTask('ignored', { promptTokens: 20, maxTokens: 3 }));
        await sleep(hangSilence);
        // Admitting may still announce the task and the runner running, and a task read at that same
        // step boundary is acknowledged; nothing after that.
        const after = runner.messages.slice(ack.index + 1);
        const allowed = (m: RunnerOutput) =>
          isStatus('hang', 'Running')(m) || isRunnerStatus('RunnerRunning')(m) || isAck('ignored')(m) || isStatus('ignored', 'Running')(m);
        expect(after.filter((m) => !allowed(m))).toEqual([]);
        expect(runner.exit).toBeNull();
        expect(() => process.kill(runner.pid, 0)).not.toThrow();
      },
      caseTimeout,
    );
  });
}
