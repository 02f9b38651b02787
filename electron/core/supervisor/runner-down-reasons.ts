/**
 * Why a runner goes down, as the supervisor's cause and the operator's words: a hello it
 * cannot use, an exit on its own, and the exit as the snapshot keeps it. Pure; the
 * supervisor acts on them (supervisor/runner-supervisor.ts, `goDown`).
 */
import { reportedFastSynchDiffers } from '../../../shared/instance-state';
import { MIN_PROTOCOL_VERSION, PROTOCOL_VERSION } from '../../../shared/runner-protocol';
import type { RunnerExitCause, RunnerExitSnapshot } from '../../../shared/snapshot';
import type { DownCause } from './runner-restart-decision';
import type { RunnerExit } from './runner-process';

export interface DownReason {
  cause: DownCause;
  message: string;
}

/** The snapshot's word for each cause. */
export const EXIT_CAUSES: Record<DownCause, RunnerExitCause> = {
  crashed: 'crashed',
  stuck: 'stuck',
  fast_synch_mismatch: 'startup_failed',
  startup_failed: 'startup_failed',
  stopped: 'stopped',
};

export function exitSnapshot(cause: DownCause, exit: RunnerExit | null, message: string): RunnerExitSnapshot {
  return { cause: EXIT_CAUSES[cause], exitCode: exit?.code ?? null, signal: exit?.signal ?? null, at: Date.now(), message };
}

/** A runner speaking a protocol exobar does not: it fails to start, for good. Null when exobar speaks it. */
export function protocolRefusal(protocolVersion: number): DownReason | null {
  if (protocolVersion >= MIN_PROTOCOL_VERSION && protocolVersion <= PROTOCOL_VERSION) return null;
  const speaks = `${MIN_PROTOCOL_VERSION}-${PROTOCOL_VERSION}`;
  return { cause: 'startup_failed', message: `runner speaks protocol ${protocolVersion}, exobar ${speaks}: install matching versions` };
}

/** A runner whose fast synch is not the policy's: refused. Null when they agree. */
export function fastSynchRefusal(expected: boolean, reported: boolean): DownReason | null {
  if (!reportedFastSynchDiffers(expected, reported)) return null;
  const message =
    `runner reports MLX_METAL_FAST_SYNCH=${reported ? 1 : 0} but the policy decided ${expected ? 1 : 0}: ` +
    'refusing to use it (check what overrides the environment of the runner)';
  return { cause: 'fast_synch_mismatch', message };
}

export interface ExitFacts {
  /** The runner was starting (before ready). */
  starting: boolean;
  /** It had not said hello yet. */
  beforeHello: boolean;
  /** Its own words when it reported RunnerFailed. */
  runnerFailedWords: string | null;
  /** The last lines of its stderr. */
  stderrTail: string;
}

/**
 * A runner that exited on its own. Before its hello, or after saying RunnerFailed while
 * starting, it would do the same again (missing engine, bad arguments, model not found):
 * a start-up failure, no retry. Otherwise a crash.
 */
export function exitedOnItsOwn(exit: RunnerExit, facts: ExitFacts): DownReason {
  const how = exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`;
  const words = facts.runnerFailedWords ?? facts.stderrTail;
  const detail = words ? `: ${words}` : '';
  if (facts.starting && (facts.beforeHello || facts.runnerFailedWords !== null) && exit.signal === null) {
    return { cause: 'startup_failed', message: `runner failed to start (${how})${detail}` };
  }
  return { cause: 'crashed', message: `runner crashed (${how})${detail}` };
}
