/**
 * Measures the sim against the numbers it is calibrated to (docs/domain.md, "The measured
 * stall", Mac Studio M3 Ultra): Llama-3.2-1B answers a short prompt in 0.23 s alone and in
 * 0.38-0.40 s while Llama-3.2-3B prefills; the 3B prefills ~30k tokens in ~19 s.
 *
 * Two sim runners share one simulated GPU (one EXOBAR_SIM_GPU_DIR), as on one Mac.
 * Figures are in simulated seconds (real seconds / time scale).
 *
 *   node --import tsx test/support/conformance/sim-calibration.ts [--time-scale 1]
 */
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import type { RunnerOutput } from '../../../shared/runner-protocol';
import { ensureNodeBuild } from '../../../scripts/build-node.js';
import { makePrompt } from '../../../shared/token-count';
import { killAllRunnerProcesses, spawnRunner, type RunnerProcess } from '../runner-under-test';
import { makeSimGpuDir, simRunnerSpec } from '../sim-runner-spec';
import { sleep } from '../eventually';
import { median } from '../median';

export interface SimCalibration {
  timeScale: number;
  /** Median TTFT of a 20-token 1B request on an idle GPU. */
  ttftAloneS: number;
  /** Median TTFT of the same request while the 3B prefills a long prompt. */
  ttftBusyS: number;
  /** ttftBusyS / ttftAloneS (exo measured 0.38-0.40 / 0.23, about 1.65-1.74). */
  busyRatio: number;
  /**
   * The fastest sample of each phase, and their ratio. A loaded machine only ever adds
   * to a sample (a late timer, a process waiting for a core, a pipe read late), so the
   * minimum is the figure least bent by whatever else the CPU is doing; the tests bound it.
   */
  ttftAloneMinS: number;
  ttftBusyMinS: number;
  busyRatioMin: number;
  /** The 3B alone: write of a 30k-token request to its last prefill progress event. */
  prefill30kS: number;
  samplesAlone: number[];
  samplesBusy: number[];
}

const SHORT_PROMPT_TOKENS = 20;
const LONG_PROMPT_TOKENS = 30_000;
/** The busy phase only needs the 3B prefilling throughout the 1B trials. */
const BUSY_PROMPT_TOKENS = 16_000;
/** exo's measurement sent the 1B request 3.5 s after the 3B's. */
const BUSY_DELAY_S = 3.5;

const isComplete = (taskId: string) => (m: RunnerOutput) => m.type === 'TaskStatusUpdated' && m.taskId === taskId && m.status === 'Complete';
const isFirstToken = (commandId: string) => (m: RunnerOutput) => m.type === 'ChunkGenerated' && m.commandId === commandId && m.chunk.kind === 'TokenChunk';
const isPrefillDone = (commandId: string) => (m: RunnerOutput) =>
  m.type === 'ChunkGenerated' && m.commandId === commandId && m.chunk.kind === 'PrefillProgressChunk' && m.chunk.processedTokens === m.chunk.totalTokens;

async function ready(runner: RunnerProcess, timeoutMs: number): Promise<void> {
  await runner.waitFor((m) => m.type === 'Hello', timeoutMs);
  runner.send({ kind: 'LoadModel', taskId: 'load' });
  await runner.waitFor(isComplete('load'), timeoutMs);
  runner.send({ kind: 'StartWarmup', taskId: 'warmup' });
  await runner.waitFor(isComplete('warmup'), timeoutMs);
}

let taskCounter = 0;
function send(runner: RunnerProcess, promptTokens: number, maxTokens: number): { taskId: string; commandId: string; sentAt: number } {
  const taskId = `cal-${++taskCounter}`;
  const commandId = `cmd-${taskId}`;
  runner.send({
    kind: 'TextGeneration',
    taskId,
    commandId,
    params: { messages: makePrompt(promptTokens, `${taskId}-${Math.random()}`), maxTokens, temperature: null, seed: null },
  });
  return { taskId, commandId, sentAt: performance.now() };
}

/** One short 1B request: its TTFT in real ms. */
async function shortRequestTtftMs(runner: RunnerProcess, timeoutMs: number): Promise<number> {
  const request = send(runner, SHORT_PROMPT_TOKENS, 2);
  const first = await runner.waitFor(isFirstToken(request.commandId), timeoutMs);
  await runner.waitFor(isComplete(request.taskId), timeoutMs);
  return first.at - request.sentAt;
}

/** Runs the measurement with its own pair of runners, killed at the end. */
export async function measureSimCalibration(options: { timeScale: number; trials?: number }): Promise<SimCalibration> {
  const { timeScale } = options;
  const trials = options.trials ?? 3;
  const toSim = (ms: number) => ms / 1000 / timeScale;
  const timeoutMs = 20_000 + 40_000 * timeScale;
  const gpuDir = makeSimGpuDir();
  const small = spawnRunner(simRunnerSpec({ model: 'sim/llama-3.2-1b', timeScale, gpuDir }));
  const medium = spawnRunner(simRunnerSpec({ model: 'sim/llama-3.2-3b', timeScale, gpuDir }));
  try {
    await Promise.all([ready(small, timeoutMs), ready(medium, timeoutMs)]);

    const samplesAlone: number[] = [];
    for (let i = 0; i < trials; i++) {
      samplesAlone.push(toSim(await shortRequestTtftMs(small, timeoutMs)));
      await sleep(50);
    }

    const long = send(medium, LONG_PROMPT_TOKENS, 1);
    const prefilled = await medium.waitFor(isPrefillDone(long.commandId), timeoutMs);
    const prefill30kS = toSim(prefilled.at - long.sentAt);
    await medium.waitFor(isComplete(long.taskId), timeoutMs);

    const busy = send(medium, BUSY_PROMPT_TOKENS, 1);
    await sleep(BUSY_DELAY_S * timeScale * 1000);
    const samplesBusy: number[] = [];
    const busyEnded = medium.waitFor(isPrefillDone(busy.commandId), timeoutMs);
    let stillBusy = true;
    void busyEnded.then(() => (stillBusy = false));
    for (let i = 0; i < trials && stillBusy; i++) {
      const ttft = await shortRequestTtftMs(small, timeoutMs);
      if (stillBusy) samplesBusy.push(toSim(ttft));
      await sleep(50);
    }
    await busyEnded;
    if (samplesBusy.length === 0) throw new Error('the 3B finished prefilling before any 1B request was measured');

    const ttftAloneS = median(samplesAlone);
    const ttftBusyS = median(samplesBusy);
    const ttftAloneMinS = Math.min(...samplesAlone);
    const ttftBusyMinS = Math.min(...samplesBusy);
    return {
      timeScale,
      ttftAloneS,
      ttftBusyS,
      busyRatio: ttftBusyS / ttftAloneS,
      ttftAloneMinS,
      ttftBusyMinS,
      busyRatioMin: ttftBusyMinS / ttftAloneMinS,
      prefill30kS,
      samplesAlone,
      samplesBusy,
    };
  } finally {
    await killAllRunnerProcesses();
  }
}

function parseTimeScale(argv: readonly string[]): number {
  const index = argv.indexOf('--time-scale');
  const value = index >= 0 ? Number(argv[index + 1]) : 1;
  if (!Number.isFinite(value) || value <= 0) throw new Error('--time-scale needs a positive number');
  return value;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  // The runners are the built bundle (test/support/sim-runner-spec.ts).
  ensureNodeBuild();
  const result = await measureSimCalibration({ timeScale: parseTimeScale(process.argv.slice(2)), trials: 5 });
  const s = (v: number) => `${v.toFixed(3)} s`;
  console.log(`sim calibration at time scale ${result.timeScale} (simulated seconds)`);
  console.log(`  1B short prompt TTFT alone       ${s(result.ttftAloneS)}   target 0.23 s`);
  console.log(`  1B TTFT while the 3B prefills    ${s(result.ttftBusyS)}   target 0.38-0.40 s`);
  console.log(`  busy / alone                     ${result.busyRatio.toFixed(2)}      target ~1.65-1.74`);
  console.log(`  3B 30k-token prefill             ${s(result.prefill30kS)}  target ~19 s`);
  console.log(JSON.stringify(result));
}
