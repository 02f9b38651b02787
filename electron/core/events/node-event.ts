/**
 * The node's event log entries: a union on `kind`, each kind with its own typed
 * payload, so the diagnosis, the policy report and the bundle read them as written
 * (no re-parsing). Payloads carry token counts, statuses and reasons, never prompt or
 * completion text. The diagnostic bundle writes them as they are to events.jsonl.
 */
import type { RunnerStatus } from '../../../shared/runner-protocol';
import type { InstanceType, RequestPhase, RunnerState, WarningCode } from '../../../shared/snapshot';
import type { DownCause } from '../supervisor/runner-supervisor';
import type { ItlFigure, PacingReleaseReason } from '../pacing/pacing-release';
import type { WatchdogPhase } from '../supervisor/watchdog';
import type { NodeErrorCode } from './node-error';
import type { LeftoverOutcome } from '../process/leftover-runners';

interface At {
  /** Monotonic milliseconds (`performance.now()` of the node process). */
  t: number;
}
interface OfInstance extends At {
  instanceId: string;
}
interface OfRequest extends OfInstance {
  requestId: string;
}

export type NodeEvent =
  | (OfRequest & { kind: 'request_arrived'; data: { promptTokens: number } })
  | (OfRequest & { kind: 'request_dispatched' })
  /** Handed to the dispatcher but never written: its runner was not ready by then; it waits in the queue again. */
  | (OfRequest & { kind: 'request_requeued' })
  | (OfRequest & { kind: 'request_acknowledged' })
  | (OfRequest & { kind: 'prefill_progress'; data: { processed: number; total: number } })
  | (OfRequest & {
      kind: 'first_token';
      data: { totalMs: number; loadMs?: number; waitMs: number; runnerWaitMs?: number; prefillMs: number; firstTokenMs: number };
    })
  | (OfRequest & { kind: 'request_finished'; data: { completionTokens: number } })
  | (OfRequest & { kind: 'request_failed'; data: { completionTokens: number; code: NodeErrorCode; reason: string } })
  | (OfRequest & { kind: 'request_cancelled'; data: { completionTokens: number } })
  | (OfRequest & { kind: 'cancel_requested'; data: { phase: RequestPhase } })
  /** The request is unknown when its task ended meanwhile. */
  | (OfInstance & { kind: 'cancel_held'; requestId?: string })
  | (OfInstance & { kind: 'cancel_sent'; requestId?: string })
  | (OfRequest & { kind: 'cancel_confirmed' })
  | (OfInstance & { kind: 'runner_status'; data: { status: RunnerStatus } })
  /** One transition of the supervisor's state machine (runner-state-machine.ts). */
  | (OfInstance & { kind: 'runner_state'; data: { from: RunnerState; to: RunnerState; reason: string } })
  /** A transition the table refused: a supervisor bug, in the log and the bundle. */
  | (OfInstance & { kind: 'runner_state_refused'; data: { from: RunnerState; to: RunnerState; reason: string } })
  | (OfInstance & { kind: 'runner_spawned'; data: { pid: number | null } })
  | (OfInstance & { kind: 'runner_exited'; data: { cause: DownCause; code: number | null; signal: string | null; reason: string } })
  | (OfInstance & { kind: 'runner_hello'; data: { fastSynch: boolean; engine: string; decided: boolean } })
  | (OfInstance & { kind: 'runner_malformed_line'; data: { reason: string } })
  | (OfInstance & { kind: 'watchdog_fired'; data: { phase: WatchdogPhase; silentMs: number; deadlineMs: number } })
  | (OfInstance & { kind: 'runner_restart_scheduled'; data: { inMs: number } })
  /**
   * The sharing policy paced this instance's prefill while `neighbours` (model names) decoded,
   * because `trigger`'s live ITL reached the engage threshold over its solo ITL.
   */
  | (OfInstance & {
      kind: 'pacing_engaged';
      data: { model: string; neighbours: string[]; chunkTokens: number | null; pauseMs: number; trigger?: ItlFigure };
    })
  /**
   * Back to full speed; `addedMs`/`addedPct`: the prefill time pacing added so far (estimated from the pauses);
   * `itl`: the neighbour's live ITL at the release, when it decided it (`neighbour_recovered`).
   */
  | (OfInstance & {
      kind: 'pacing_released';
      data: { model: string; neighbours: string[]; reason: PacingReleaseReason; pacedMs: number; addedMs: number; addedPct: number; itl?: ItlFigure | null };
    })
  /**
   * A prefill that ended beside streaming `neighbours` without being paced: their live ITL stayed
   * below the engage threshold (`peak`, the highest seen), or their solo ITL was unknown (`peak` null).
   */
  | (OfInstance & { kind: 'pacing_not_needed'; data: { model: string; neighbours: string[]; peak: ItlFigure | null; engageItlRatio: number } })
  | (OfInstance & {
      kind: 'instance_created';
      data: { model: string; instanceType: InstanceType; fastSynch: boolean; reason: string; onDemand?: boolean; pinned?: boolean };
    })
  /** Its runner was ready for the first time: the model is loaded (`onDemand`: a request started it). */
  | (OfInstance & { kind: 'instance_loaded'; data: { model: string; loadMs: number; onDemand: boolean } })
  | (OfInstance & { kind: 'instance_deleted' })
  /** Unloaded: idle past its time to live, evicted to make room for another model, or by the operator. */
  | (OfInstance & { kind: 'instance_unloaded'; data: { model: string; reason: UnloadReason; idleMs: number; memoryBytes: number } })
  /** A request's load of a model was refused (fit check, fast-synch gate, nothing could unload), in words. */
  | (At & { kind: 'model_load_refused'; data: { model: string; code: string; reason: string } })
  /** exobar placed a model on the attached exo for a request (`exo.placeOnDemand`): its runners are ready. */
  | (At & { kind: 'exo_model_placed'; data: { model: string; exoInstanceId: string; loadMs: number } })
  /** exobar deleted an exo instance it had placed on demand, idle past its time to live. */
  | (At & { kind: 'exo_model_deleted'; data: { model: string; exoInstanceId: string; reason: 'idle'; idleMs: number } })
  /** A runner a previous exobar left running, found at start (exited, killed, survived; reused: the pid is another process now, left alone). */
  | (At & { kind: 'runner_orphan'; data: { pid: number; outcome: LeftoverOutcome } })
  | (At & { kind: 'warning_raised'; data: WarningEventData })
  | (At & { kind: 'warning_cleared'; data: WarningEventData });

/** Why an instance unloaded. */
export type UnloadReason = 'idle' | 'evicted' | 'operator';

/** Which warning was raised or cleared, and for which instances. */
export interface WarningEventData {
  code: WarningCode;
  instanceIds: string[];
}

export type NodeEventKind = NodeEvent['kind'];

/** One kind's entry. */
export type NodeEventOf<K extends NodeEventKind> = Extract<NodeEvent, { kind: K }>;

/** An entry as written: the log stamps `t`. */
export type NewNodeEvent = NodeEvent extends infer E ? (E extends NodeEvent ? Omit<E, 't'> : never) : never;

/** Narrows an entry to the given kinds (a type guard usable with `filter`). */
export function isEventOf<K extends NodeEventKind>(...kinds: K[]): (event: NodeEvent) => event is NodeEventOf<K> {
  return (event): event is NodeEventOf<K> => (kinds as string[]).includes(event.kind);
}

/** The instance an entry is about; null for node-wide entries (warnings). */
export function instanceIdOf(event: NodeEvent): string | null {
  return 'instanceId' in event ? event.instanceId : null;
}

/** The request an entry is about; null for entries about no single request. */
export function requestIdOf(event: NodeEvent): string | null {
  return 'requestId' in event ? (event.requestId ?? null) : null;
}
