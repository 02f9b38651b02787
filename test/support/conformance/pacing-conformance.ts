/**
 * Conformance cases for prefill pacing (protocol 2, docs/runner-protocol.md): a
 * SetPrefillPacing is acknowledged with PrefillPacingApplied, takes effect at the next
 * prefill chunk (that chunk size, that pause after each chunk but the last), and changes
 * no token. Run against real child processes by every runner's conformance file, beside
 * {@link describeRunnerConformance}.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_PREFILL_CHUNK_TOKENS, type RunnerInput, type RunnerOutput, type SetPrefillPacing } from '../../../shared/runner-protocol';
import { makePrompt } from '../../../shared/token-count';
import { useRunnerProcessCleanup } from '../runner-cleanup';
import type { ReceivedMessage, RunnerProcess } from '../runner-under-test';
import { conformanceRunners, conformanceTimeouts, isStatus, type RunnerConformanceProfile } from './conformance-runner';

type Applied = Extract<RunnerOutput, { type: 'PrefillPacingApplied' }>;

const isApplied = (pacingId: string) => (m: RunnerOutput) => m.type === 'PrefillPacingApplied' && m.pacingId === pacingId;
const isProgress = (commandId: string) => (m: RunnerOutput) =>
  m.type === 'ChunkGenerated' && m.commandId === commandId && m.chunk.kind === 'PrefillProgressChunk';

/** A generation of a fixed prompt (the same words every time, so outputs can be compared). */
function task(taskId: string, promptTokens: number, maxTokens: number): Extract<RunnerInput, { kind: 'TextGeneration' }> {
  return {
    kind: 'TextGeneration',
    taskId,
    commandId: `cmd-${taskId}`,
    params: { messages: makePrompt(promptTokens, 'paced'), maxTokens, temperature: 0, seed: 7 },
  };
}

function pacing(pacingId: string, chunkTokens: number | null, pauseMs: number): SetPrefillPacing {
  return { kind: 'SetPrefillPacing', pacingId, chunkTokens, pauseMs };
}

/** The request's prefill progress events after each chunk, in order (not the 0-token report of its start). */
function progressOf(runner: RunnerProcess, commandId: string): (ReceivedMessage & { processed: number })[] {
  return runner.received.flatMap((r) =>
    r.message.type === 'ChunkGenerated' &&
    r.message.commandId === commandId &&
    r.message.chunk.kind === 'PrefillProgressChunk' &&
    r.message.chunk.processedTokens > 0
      ? [{ ...r, processed: r.message.chunk.processedTokens }]
      : [],
  );
}

function tokenIds(runner: RunnerProcess, commandId: string): number[] {
  return runner.messages.flatMap((m) => (m.type === 'ChunkGenerated' && m.commandId === commandId && m.chunk.kind === 'TokenChunk' ? [m.chunk.tokenId] : []));
}

/** Prompt tokens each progress event added. */
const steps = (progress: { processed: number }[]) => progress.map((p, i) => p.processed - (i === 0 ? 0 : progress[i - 1]!.processed));

/** Registers the pacing cases for one runner engine. */
export function describePrefillPacingConformance(label: string, profile: RunnerConformanceProfile): void {
  // Paced prefills take longer than the suite's long prefill: smaller chunks plus pauses.
  const timeouts = conformanceTimeouts(profile, 8);
  const { generation: generationTimeout, long: longTimeout, case: caseTimeout } = timeouts;
  const { startReady } = conformanceRunners(profile, timeouts);

  describe(`prefill pacing conformance: ${label}`, () => {
    useRunnerProcessCleanup();

    it(
      'acknowledges a pacing at once when not prefilling (commandId null), prefills the next prompt in its chunks, ignores an invalid one',
      async () => {
        const runner = await startReady();
        runner.send(pacing('bad', 8, 0)); // below the smallest chunk: invalid, ignored, never acknowledged
        runner.send(pacing('small', 512, 0));
        const applied = await runner.waitFor(isApplied('small'), generationTimeout);
        expect(applied.message).toEqual({ type: 'PrefillPacingApplied', pacingId: 'small', chunkTokens: 512, pauseMs: 0, commandId: null });
        // Not a task: no ack, no status for it.
        expect(runner.messages.some((m) => m.type === 'TaskAcknowledged' && m.taskId === 'small')).toBe(false);

        const promptTokens = 2 * 1024 + 100;
        runner.send(task('paced', promptTokens, 3));
        await runner.waitFor(isStatus('paced', 'Complete'), longTimeout);
        const progress = progressOf(runner, 'cmd-paced');
        expect(progress.at(-1)!.processed).toBe(promptTokens);
        // Every chunk but the last is 512 tokens (the last may be shorter).
        expect(steps(progress.slice(0, -1)).every((s) => s === 512)).toBe(true);
        expect(progress.length).toBeGreaterThanOrEqual(Math.floor(promptTokens / 512));

        // Back to full speed: the runner's own chunks again.
        runner.send(pacing('full', null, 0));
        await runner.waitFor(isApplied('full'), generationTimeout);
        runner.send(task('full-speed', promptTokens, 3));
        await runner.waitFor(isStatus('full-speed', 'Complete'), longTimeout);
        expect(progressOf(runner, 'cmd-full-speed').map((p) => p.processed)).toEqual([promptTokens]);
        expect(runner.messages.some(isApplied('bad'))).toBe(false);
        expect(runner.exit).toBeNull();
      },
      caseTimeout,
    );

    it(
      'applies a pacing read during a prefill from the next chunk, acknowledged with that prefill’s command id, pausing after each chunk',
      async () => {
        const runner = await startReady();
        const pauseMs = 60;
        runner.send(task('long', profile.longPromptTokens, 2));
        await runner.waitFor(isProgress('cmd-long'), longTimeout);
        const sentAt = runner.sent.length;
        runner.send(pacing('mid', 1024, pauseMs));
        await runner.waitFor(isStatus('long', 'Complete'), longTimeout);

        const progress = progressOf(runner, 'cmd-long');
        const applied = runner.received.find((r) => isApplied('mid')(r.message))!;
        expect(applied, 'the pacing was acknowledged').toBeDefined();
        if (runner.sent[sentAt]!.at >= progress.at(-1)!.at) {
          throw new Error(`${label}: inconclusive: the pacing was written after the long prefill had ended`);
        }
        expect((applied.message as Applied).commandId).toBe('cmd-long');
        expect(applied.message).toMatchObject({ chunkTokens: 1024, pauseMs });
        // Read at a chunk boundary: right after a progress event, before the next one.
        const before = progress.filter((p) => p.index < applied.index);
        const after = progress.filter((p) => p.index > applied.index);
        expect(before.length).toBeGreaterThanOrEqual(1);
        expect(after.length).toBeGreaterThanOrEqual(2);
        expect(steps(before).every((s) => s === DEFAULT_PREFILL_CHUNK_TOKENS)).toBe(true);
        const afterSteps = steps(progress).slice(before.length);
        expect(afterSteps.slice(0, -1).every((s) => s === 1024)).toBe(true);
        expect(afterSteps.at(-1)!).toBeLessThanOrEqual(1024);
        // A pause after every paced chunk but the last: consecutive paced events are at least that far apart.
        const gaps = after.slice(1).map((p, i) => p.at - after[i]!.at);
        const meanGap = gaps.reduce((a, b) => a + b, 0) / gaps.length;
        expect(meanGap).toBeGreaterThanOrEqual(pauseMs * 0.9);
        expect(runner.messages.some(isStatus('long', 'Complete'))).toBe(true);
      },
      caseTimeout,
    );

    it(
      'changes no token: the same greedy request gives the same tokens with and without pacing',
      async () => {
        const runner = await startReady();
        const promptTokens = 2 * DEFAULT_PREFILL_CHUNK_TOKENS + 300;
        runner.send(task('plain', promptTokens, 12));
        await runner.waitFor(isStatus('plain', 'Complete'), longTimeout);
        runner.send(pacing('fine', 256, 5));
        await runner.waitFor(isApplied('fine'), generationTimeout);
        runner.send(task('paced', promptTokens, 12));
        await runner.waitFor(isStatus('paced', 'Complete'), longTimeout);
        expect(progressOf(runner, 'cmd-paced').length).toBeGreaterThan(progressOf(runner, 'cmd-plain').length * 4);
        // The same prompt and seed: the command ids differ, so compare what the model chose.
        const plain = tokenIds(runner, 'cmd-plain');
        expect(plain).toHaveLength(12);
        expect(tokenIds(runner, 'cmd-paced')).toEqual(plain);
      },
      caseTimeout,
    );
  });
}
