/**
 * The state of the exo process exobar started on this Mac, as it appears in the
 * snapshot (`snapshot.exoProcess`) and the views. The process manager in
 * electron/core/exo-process/ is the only writer; the views read it to show exo's own
 * state (starting, running, stopping, crashed) and why. Rules: docs/exo-process.md.
 */
import { z } from 'zod';
import type { ExoFastSynch, ExoSection } from './exo-snapshot';

const epochMs = z.number().finite();

/**
 * idle: exobar has not started exo. starting: spawned, waiting for the API to answer.
 * running: `/node_id` then `/state` answered. stopping: SIGINT/SIGTERM/SIGKILL under way.
 * crashed: exo exited on its own, or could not start (see `failure`). restarting: a
 * restart is scheduled (backoff) or under way. needs_attention: runners exo left behind
 * could not be stopped cleanly (the GPU may be wedged); nothing restarts on its own.
 * stopped: exobar stopped it.
 */
export const EXO_PROCESS_STATUSES = ['idle', 'starting', 'running', 'stopping', 'crashed', 'restarting', 'needs_attention', 'stopped'] as const;
export const ExoProcessStatusSchema = z.enum(EXO_PROCESS_STATUSES);
export type ExoProcessStatus = z.infer<typeof ExoProcessStatusSchema>;

/** Why exo is not running, as a code the views can key words and actions on. */
export const ExoProcessFailureSchema = z.enum([
  /** The command (`exo.command`) does not exist or is not executable. */
  'command_not_found',
  /** Something already listens on the API port (seen before the start or in exo's output). */
  'port_taken',
  /** Another exo holds `~/.exo/exo.pid`. */
  'pidfile_held',
  /** exo exited before its API answered. */
  'exited_during_start',
  /** exo kept running but its API did not answer within the start deadline. */
  'not_ready',
  /** exo exited on its own after it was running. */
  'crashed',
  /** Runners exo left behind had to be killed or could not be stopped: the GPU may be wedged. */
  'runners_left',
]);
export type ExoProcessFailure = z.infer<typeof ExoProcessFailureSchema>;

/** The most lines of exo's output the state carries (the full logs are in files). */
export const EXO_LAST_LINES_MAX = 40;

/** The fast-synch value exobar gave exo, why, and what exo's own log line said. */
export const ExoProcessFastSynchSchema = z.object({
  /** The value exobar set (EXO_FAST_SYNCH and --fast-synch/--no-fast-synch). */
  enabled: z.boolean(),
  /** In words: "ring instances only", "forced on by the operator (risk acknowledged)", ... */
  reason: z.string(),
  /** What exo logged ("FAST_SYNCH forced ON/OFF"); null until the line was seen. */
  observed: z.boolean().nullable(),
  /** True when exo's line says the other value: the integrator shows `exo_fast_synch_mismatch`. */
  mismatch: z.boolean(),
});
export type ExoProcessFastSynch = z.infer<typeof ExoProcessFastSynchSchema>;

/** How exo's last process ended. */
export const ExoProcessExitSchema = z.object({
  code: z.number().int().nullable(),
  signal: z.string().nullable(),
  at: epochMs,
});
export type ExoProcessExit = z.infer<typeof ExoProcessExitSchema>;

/** A restart exobar would need (a launch wants the other fast-synch value), waiting for consent. */
export const ExoRestartNeededSchema = z.object({
  fastSynch: z.boolean(),
  reason: z.string(),
  /** What the operator agrees to, in words (a restart deletes the instances that span this Mac). */
  message: z.string(),
});
export type ExoRestartNeeded = z.infer<typeof ExoRestartNeededSchema>;

export const ExoProcessStateSchema = z.object({
  status: ExoProcessStatusSchema,
  /** True while a process exobar spawned is alive: quitting exobar stops it. Never true for an exo exobar only attached to. */
  ownsProcess: z.boolean(),
  pid: z.number().int().positive().nullable(),
  /** The command line exobar ran (command then arguments); null before the first start. */
  command: z.array(z.string()).nullable(),
  apiPort: z.number().int().min(1).max(65535),
  /** Epoch ms of the current (or last) spawn. */
  startedAt: epochMs.nullable(),
  /** Epoch ms when the API answered `/node_id` and `/state`. */
  readyAt: epochMs.nullable(),
  /** exo's node id from `/node_id` (new on every start). */
  nodeId: z.string().nullable(),
  /** Start-up progress in words ("waiting for /node_id"), null once running. */
  progress: z.string().nullable(),
  fastSynch: ExoProcessFastSynchSchema.nullable(),
  /** How the last exo process ended (kept through a restart); null until one ended. */
  exit: ExoProcessExitSchema.nullable(),
  failure: ExoProcessFailureSchema.nullable(),
  /** Why the status is what it is, in words, with what to do. */
  reason: z.string().nullable(),
  /** exo's last output lines (stdout and stderr, oldest first), at most EXO_LAST_LINES_MAX. */
  lastLines: z.array(z.string()).max(EXO_LAST_LINES_MAX),
  restarts: z.object({
    /** Automatic restarts since the last start the operator asked for. */
    count: z.number().int().nonnegative(),
    max: z.number().int().nonnegative(),
    /** Epoch ms of the next automatic restart; null when none is scheduled. */
    nextAt: epochMs.nullable(),
  }),
  restartNeeded: ExoRestartNeededSchema.nullable(),
});
export type ExoProcessState = z.infer<typeof ExoProcessStateSchema>;

/**
 * The warning for a fast-synch value exo did not take (its "FAST_SYNCH forced ON|OFF"
 * line says the other value: a wrapper script, an old exo, a flag in the way). Shaped
 * like the snapshot's Warning; the node adds it to `warnings` beside `exoProcess`.
 */
export function exoFastSynchMismatchWarning(state: Pick<ExoProcessState, 'fastSynch'>): {
  code: 'exo_fast_synch_mismatch';
  instanceIds: string[];
  title: string;
  risk: string;
  fix: string;
} | null {
  const fast = state.fastSynch;
  if (!fast?.mismatch || fast.observed === null) return null;
  const word = (on: boolean): string => (on ? 'on' : 'off');
  return {
    code: 'exo_fast_synch_mismatch',
    instanceIds: [],
    title: `exo runs with fast synch ${word(fast.observed)}, but exobar started it with fast synch ${word(fast.enabled)}`,
    risk: fast.observed
      ? 'With fast synch on, two ring models on this GPU can spin forever: throughput collapses or the GPU stays wedged until reboot.'
      : 'JACCL instances on this Mac run with fast synch off, so their collectives are slower.',
    fix: `Check exo.command and exo.args for a wrapper or flag that sets fast synch, then restart exo from exobar (exobar wants ${word(fast.enabled)}: ${fast.reason}).`,
  };
}

/**
 * This Mac's fast synch for its node in the exo section, when exobar runs its exo:
 * the value exobar set (`source: 'exobar'`), or, when exo's own line said otherwise,
 * that value (`source: 'exo_log'`): the shared-GPU warnings must judge what runs.
 * Null when exobar does not run this Mac's exo.
 */
export function thisMacFastSynch(state: Pick<ExoProcessState, 'fastSynch' | 'ownsProcess'>): ExoFastSynch | null {
  const fast = state.fastSynch;
  if (!state.ownsProcess || !fast) return null;
  if (fast.mismatch && fast.observed !== null) return { enabled: fast.observed, source: 'exo_log' };
  return { enabled: fast.enabled, source: 'exobar' };
}

/**
 * The exo section with this Mac's node (the one whose id is the exo exobar runs:
 * `state.nodeId`) given {@link thisMacFastSynch}; the section unchanged when exobar
 * does not run this Mac's exo or the node is not in it. For the code that builds the
 * exo section, so the exo section and its shared-GPU warnings use what exobar set.
 */
export function withThisMacFastSynch(section: ExoSection, state: Pick<ExoProcessState, 'fastSynch' | 'ownsProcess' | 'nodeId'> | null): ExoSection {
  const fastSynch = state ? thisMacFastSynch(state) : null;
  if (!fastSynch || !state?.nodeId || !section.nodes.some((n) => n.nodeId === state.nodeId)) return section;
  return { ...section, nodes: section.nodes.map((n) => (n.nodeId === state.nodeId ? { ...n, fastSynch } : n)) };
}
