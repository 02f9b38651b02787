/**
 * What a runner supervisor tells its owner (the node's instance): every step of the
 * runner's life and of each generation task, as one event union.
 */
import type { Chunk, Hello, PrefillPacing, PromptCacheStats, RunnerSchedule, RunnerStatus, SimProfileName, TaskStatus } from '../../../shared/runner-protocol';
import type { RunnerExit } from './runner-process';
import type { DownCause } from './runner-restart-decision';
import type { RunnerStateChange } from './runner-state-machine';
import type { WatchdogPhase } from './watchdog';

export type SupervisorEvent =
  | { type: 'spawned'; pid: number | null }
  /** `schedule` is exo's for a runner older than protocol 3; `promptCache` null when it has none. */
  | {
      type: 'hello';
      fastSynch: boolean;
      engine: string;
      schedule: RunnerSchedule;
      promptCache: Hello['promptCache'] | null;
      features?: Hello['features'];
      simProfile: SimProfileName | null;
    }
  /** The runner's prompt cache after a request's prefill, and after a request ends when it changed (protocol 3). */
  | { type: 'prompt_cache'; stats: PromptCacheStats }
  | { type: 'runner_status'; status: RunnerStatus }
  | { type: 'ready' }
  | { type: 'ack'; taskId: string }
  | { type: 'chunk'; taskId: string; chunk: Chunk }
  | { type: 'task_status'; taskId: string; status: TaskStatus }
  | { type: 'cancel_held'; taskId: string }
  | { type: 'cancel_sent'; taskId: string }
  /** A generation task ended without a terminal status from the runner (it died or was stopped). */
  | { type: 'task_lost'; taskId: string; cause: DownCause; message: string }
  | { type: 'malformed_line'; reason: string }
  /** The runner applied a prefill pacing (its next chunk follows it); `commandId` is the prefill it was read in. */
  | { type: 'pacing_applied'; pacingId: string; pacing: PrefillPacing; commandId: string | null }
  | { type: 'watchdog'; phase: WatchdogPhase; silentMs: number; deadlineMs: number }
  | { type: 'down'; cause: DownCause; message: string; exit: RunnerExit | null; willRestartInMs: number | null }
  /** One accepted transition of the runner's state (runner-state-machine.ts). */
  | ({ type: 'state' } & RunnerStateChange)
  /** A transition the table refused: a supervisor bug, logged and kept for the bundle. */
  | ({ type: 'state_refused' } & RunnerStateChange);
