/**
 * What every conformance suite (the runner protocol's, prefill pacing's) sets up before its
 * cases: the profile that says how to start one engine's runner, the timeouts it gets, and
 * a runner started to its hello or made ready (LoadModel and StartWarmup complete).
 */
import type { Hello, RunnerOutput, RunnerSchedule, TaskStatus } from '../../../shared/runner-protocol';
import { spawnRunner, type RunnerProcess, type RunnerSpawnSpec } from '../runner-under-test';

/** How the suites start and pace a runner of one engine. */
export interface RunnerConformanceProfile {
  /**
   * The spawn spec for one fresh runner. `extraEnv` must be applied on top of the
   * profile's own environment, an `undefined` value removing the variable; the
   * fast-synch variables (MLX_METAL_FAST_SYNCH, EXO_FAST_SYNCH) must be unset unless
   * `extraEnv` sets them. The command must be the runner itself (not a shell wrapper):
   * the hello's pid is checked against the spawned pid. Every call should give an
   * isolated runner (for the sim: its own simulated GPU), since cases measure ordering.
   * `schedule` goes to the runner as `--schedule`; absent: `exo` (the pacing suite's).
   */
  spawn(extraEnv: Record<string, string | undefined>, schedule?: RunnerSchedule): RunnerSpawnSpec;
  /** The `engine` the hello must report. */
  engine: Hello['engine'];
  /** The `model` the hello must report (what the spawn spec asked for). */
  model: string;
  /**
   * Prompt tokens (counted with shared/token-count.ts) of the "long" prompt used to keep
   * the runner inside one prefill while the suite writes more lines. At least
   * 3 × 4096 + 1 tokens (four chunks), so at least two chunk boundaries remain after the
   * first progress event.
   */
  longPromptTokens: number;
  /**
   * Roughly how long that prefill takes, in ms. Each chunk must take long enough
   * (about 100 ms or more) that a line written at the first progress event reaches the
   * runner before the prefill ends; the suite fails a case as inconclusive otherwise.
   * Also sizes the timeouts.
   */
  longPrefillMs: number;
  /**
   * Whether the engine honours `params.stop` (stop sequences). An engine that does not
   * says why; its case is skipped with that reason, and the API refuses `stop` for it.
   */
  stopSequences: 'supported' | { unsupportedBecause: string };
  /** Spawn to hello, ms (default 15000: interpreters start slowly on a busy machine). */
  startTimeoutMs?: number;
  /** LoadModel plus StartWarmup, ms (default 15000). */
  lifecycleTimeoutMs?: number;
  /** A short request (tens of tokens) from write to completion, ms (default 10000). */
  generationTimeoutMs?: number;
  /** Silence that counts as hung after the hang prompt, ms (default 1000). */
  hangSilenceMs?: number;
  /**
   * How a request with `maxTokens: null` ends (default `stop`: the model ends on its own).
   * A random-weight model may never pick its end-of-turn token: `{ length: n }` then
   * expects the runner's default cap of n tokens (its --default-max-tokens).
   */
  naturalEnd?: 'stop' | { length: number };
}

/** How long a runner timed as a sim model (the sim, the MLX runner's test engine) prefills `tokens` in one go at `timeScale`, ms: a profile's `longPrefillMs`. */
export const simPrefillMs = (timings: { prefillFixedS: number; prefillTokensPerS: number }, tokens: number, timeScale: number): number =>
  (timings.prefillFixedS + tokens / timings.prefillTokensPerS) * timeScale * 1000;

export const isStatus = (taskId: string, status: TaskStatus) => (m: RunnerOutput) =>
  m.type === 'TaskStatusUpdated' && m.taskId === taskId && m.status === status;

/** The timeouts of one suite's cases, ms, from the profile's. */
export interface ConformanceTimeouts {
  start: number;
  lifecycle: number;
  generation: number;
  /** A generation that includes the suite's long prefill. */
  long: number;
  /** A whole case: a start, the lifecycle and two long generations. */
  case: number;
}

/** `longPrefills`: how many of the profile's long prefills a long generation may take (paced prefills take longer). */
export function conformanceTimeouts(profile: RunnerConformanceProfile, longPrefills: number): ConformanceTimeouts {
  const start = profile.startTimeoutMs ?? 15_000;
  const lifecycle = profile.lifecycleTimeoutMs ?? 15_000;
  const generation = profile.generationTimeoutMs ?? 10_000;
  const long = generation + profile.longPrefillMs * longPrefills;
  return { start, lifecycle, generation, long, case: start + lifecycle + long * 2 };
}

/** Starts the profile's runners under `schedule` (absent: the profile's default). */
export function conformanceRunners(profile: RunnerConformanceProfile, timeouts: ConformanceTimeouts, schedule?: RunnerSchedule) {
  /** A fresh runner, once it has said hello. */
  async function start(extraEnv: Record<string, string | undefined> = {}): Promise<RunnerProcess> {
    const runner = spawnRunner(profile.spawn(extraEnv, schedule));
    await runner.waitFor((m) => m.type === 'Hello', timeouts.start, { description: 'the hello' });
    return runner;
  }

  /** A fresh runner with its model loaded and warmed up. */
  async function startReady(): Promise<RunnerProcess> {
    const runner = await start();
    runner.send({ kind: 'LoadModel', taskId: 'load' });
    await runner.waitFor(isStatus('load', 'Complete'), timeouts.lifecycle, { description: 'LoadModel Complete' });
    runner.send({ kind: 'StartWarmup', taskId: 'warmup' });
    await runner.waitFor(isStatus('warmup', 'Complete'), timeouts.lifecycle, { description: 'StartWarmup Complete' });
    return runner;
  }

  return { start, startReady };
}
