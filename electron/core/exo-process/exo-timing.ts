/** How long this Mac's exo gets for each step of its start and stop, and those durations in words. */

export interface ExoTiming {
  /** How long exo may take for `/node_id` and `/state` to answer. */
  readyTimeoutMs: number;
  pollIntervalMs: number;
  /** Wait after SIGINT (exo's graceful shutdown), then after SIGTERM, then after SIGKILL. */
  sigintGraceMs: number;
  sigtermGraceMs: number;
  sigkillWaitMs: number;
  /** Per leftover runner: wait after SIGTERM, then after SIGKILL. */
  runnerTermGraceMs: number;
  runnerKillWaitMs: number;
  /** How long a restart waits for `~/.exo/exo.pid` to be released. */
  pidfileReleaseTimeoutMs: number;
  /** How often exo's children are recorded (pid and start time) while it runs. */
  childScanIntervalMs: number;
}

export const DEFAULT_EXO_TIMING: ExoTiming = {
  readyTimeoutMs: 180_000,
  pollIntervalMs: 250,
  sigintGraceMs: 10_000,
  sigtermGraceMs: 5_000,
  sigkillWaitMs: 3_000,
  runnerTermGraceMs: 5_000,
  runnerKillWaitMs: 2_000,
  pidfileReleaseTimeoutMs: 30_000,
  childScanIntervalMs: 1_000,
};

/**
 * The longest a stop takes with these timings: exo's three signals and their waits,
 * then the leftover runners (stopped side by side), plus a margin.
 */
export function stopBudgetMs(t: ExoTiming): number {
  return t.sigintGraceMs + t.sigtermGraceMs + t.sigkillWaitMs + t.runnerTermGraceMs + t.runnerKillWaitMs + 2_000;
}

/** A duration in the state's words: tenths of a second. */
export function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}
