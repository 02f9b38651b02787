/**
 * The kill ladder every supervised process is stopped with: send a signal, wait for the
 * exit, escalate to the next signal, until the last. A runner's ladder is SIGTERM then
 * SIGKILL to its process group; exo's is SIGINT (its graceful shutdown), SIGTERM,
 * SIGKILL. Pure of processes: the caller says how to signal, how to wait, and what to do
 * before each rung (record descendants, say progress).
 */

/** One rung: the signal, and how long to wait for the exit after it. */
export interface KillRung {
  signal: NodeJS.Signals;
  waitMs: number;
}

export interface KillLadderOps {
  /** Sends `signal` (to the process, or its group). */
  send(signal: NodeJS.Signals): void;
  /** Resolves true when the process has exited within `ms`, false when it has not. */
  waitExit(ms: number): Promise<boolean>;
  /** Called before each rung's signal, with the rung that ended without an exit (null for the first). */
  beforeRung?(rung: KillRung, previous: KillRung | null): void | Promise<void>;
}

/** How a climb ended: the last signal sent, and whether the process exited (false: it outlived the last rung). */
export interface KillLadderResult {
  signal: NodeJS.Signals | null;
  exited: boolean;
}

/** Climbs `rungs` in order until the process exits; never sends a rung after the exit. */
export async function climbKillLadder(rungs: readonly KillRung[], ops: KillLadderOps): Promise<KillLadderResult> {
  let previous: KillRung | null = null;
  for (const rung of rungs) {
    await ops.beforeRung?.(rung, previous);
    ops.send(rung.signal);
    if (await ops.waitExit(rung.waitMs)) return { signal: rung.signal, exited: true };
    previous = rung;
  }
  return { signal: previous?.signal ?? null, exited: false };
}
