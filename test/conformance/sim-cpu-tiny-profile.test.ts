/**
 * The sim with the `cpu-tiny` profile (electron/runners/sim/sim-profiles.ts, measured by
 * `npm run calibrate-sim` on the MLX runner's engine and a tiny real model) answers a
 * prompt cache miss and hit in the real runner's proportions: the calibrated prompt's
 * miss takes about its measured time, and its hit a small share of it, as real MLX's did.
 * The sim runs at half speed; load on a shared machine only ever adds to a sample, so each
 * figure is the fastest of a few trials and the bands are wider above than below.
 */
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import type { RunnerOutput } from '../../shared/runner-protocol';
import { makePrompt } from '../../shared/token-count';
import { SIM_PROFILES } from '../../electron/runners/sim/sim-profiles';
import { useRunnerProcessCleanup } from '../support/runner-cleanup';
import { spawnRunner, type RunnerProcess } from '../support/runner-under-test';
import { simRunnerSpec } from '../support/sim-runner-spec';

const TIME_SCALE = 0.5;
const TRIALS = 3;
const PROFILE = SIM_PROFILES['cpu-tiny'];
const TIMEOUT_MS = 120_000;

const isComplete = (taskId: string) => (m: RunnerOutput) => m.type === 'TaskStatusUpdated' && m.taskId === taskId && m.status === 'Complete';
const isFirstToken = (commandId: string) => (m: RunnerOutput) => m.type === 'ChunkGenerated' && m.commandId === commandId && m.chunk.kind === 'TokenChunk';

let tasks = 0;
/** One request of the calibrated length: its TTFT in simulated seconds. */
async function ttftS(runner: RunnerProcess, salt: string): Promise<number> {
  const taskId = `t${++tasks}`;
  const commandId = `cmd-${taskId}`;
  const sentAt = performance.now();
  runner.send({
    kind: 'TextGeneration',
    taskId,
    commandId,
    params: { messages: makePrompt(PROFILE.measured.promptTokens, salt), maxTokens: 1, temperature: 0, seed: null },
  });
  const first = await runner.waitFor(isFirstToken(commandId), TIMEOUT_MS);
  await runner.waitFor(isComplete(taskId), TIMEOUT_MS);
  return (first.at - sentAt) / 1000 / TIME_SCALE;
}

describe('the sim with the cpu-tiny profile', () => {
  useRunnerProcessCleanup();

  it("answers a prompt cache hit and miss in the real MLX runner's proportions", async () => {
    const runner = spawnRunner(
      simRunnerSpec({ model: 'sim/llama-3.2-1b', timeScale: TIME_SCALE, args: ['--profile', 'cpu-tiny', '--prompt-cache-bytes', String(2 ** 30)] }),
    );
    await runner.waitFor((m) => m.type === 'Hello', TIMEOUT_MS);
    runner.send({ kind: 'LoadModel', taskId: 'load' });
    await runner.waitFor(isComplete('load'), TIMEOUT_MS);
    runner.send({ kind: 'StartWarmup', taskId: 'warmup' });
    await runner.waitFor(isComplete('warmup'), TIMEOUT_MS);

    const misses: number[] = [];
    const hits: number[] = [];
    for (let trial = 0; trial < TRIALS; trial++) {
      misses.push(await ttftS(runner, `w${900 + trial}`));
      hits.push(await ttftS(runner, `w${900 + trial}`));
    }
    const miss = Math.min(...misses);
    const hit = Math.min(...hits);
    const { missTtftS, hitTtftS } = PROFILE.measured;
    const report = JSON.stringify({ misses, hits, measured: PROFILE.measured });
    expect(miss, report).toBeGreaterThan(missTtftS * 0.8);
    expect(miss, report).toBeLessThan(missTtftS * 1.5);
    // The hit: a small share of the miss, as on real MLX (a few hundredths of a second of
    // load on top of a sample is most of a hit's time, hence the absolute margin).
    expect(hit, report).toBeGreaterThan(hitTtftS * 0.8);
    expect(hit / miss, report).toBeLessThan(hitTtftS / missTtftS + 0.05);
  }, 600_000);
});
