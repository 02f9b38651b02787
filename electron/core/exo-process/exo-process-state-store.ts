/**
 * The one {@link ExoProcessState} of this Mac's exo: every change goes through `update`,
 * the status only through the table (exo-process-machine.ts: a refused move is counted
 * and logged, and the rest of the patch applies), and each change reaches the listeners.
 */
import type { Logger } from 'pino';
import { EXO_LAST_LINES_MAX, type ExoProcessState, type ExoProcessStatus } from '../../../shared/exo-process';
import { StateMachine, type StateChange } from '../process/state-machine';
import { EXO_PROCESS_TRANSITIONS } from './exo-process-machine';
import type { ExoLogs } from './exo-logs';

/** The message of the log record a refused exo status change writes. */
export const REFUSED_EXO_STATUS_CHANGE = 'refused exo status change';

export interface ExoProcessStateStoreOptions {
  apiPort: number;
  maxRestarts: number;
  now: () => number;
  /** exo's logs: the last lines go into every state, a refused change is noted there. */
  logs: ExoLogs;
  /** Whether an exo exobar spawned is alive, read at every change. */
  ownsProcess: () => boolean;
  logger?: Pick<Logger, 'warn'>;
}

export class ExoProcessStateStore {
  private value: ExoProcessState;
  private readonly listeners = new Set<(state: ExoProcessState) => void>();
  /** The one status value (`value.status` mirrors it), written through the table. */
  private readonly machine: StateMachine<ExoProcessStatus>;

  constructor(private readonly options: ExoProcessStateStoreOptions) {
    const { logs, logger } = options;
    this.machine = new StateMachine(
      EXO_PROCESS_TRANSITIONS,
      'idle',
      {
        changed: () => undefined,
        refused: (c) => {
          logs.note(`${REFUSED_EXO_STATUS_CHANGE} ${c.from} > ${c.to} (${c.reason})`);
          logger?.warn({ from: c.from, to: c.to, cause: c.reason }, REFUSED_EXO_STATUS_CHANGE);
        },
      },
      options.now,
    );
    this.value = {
      status: 'idle',
      ownsProcess: false,
      pid: null,
      command: null,
      apiPort: options.apiPort,
      startedAt: null,
      readyAt: null,
      nodeId: null,
      progress: null,
      fastSynch: null,
      exit: null,
      failure: null,
      reason: null,
      lastLines: [],
      restarts: { count: 0, max: options.maxRestarts, nextAt: null },
      restartNeeded: null,
    };
  }

  /** The state now, as kept (not a copy: read it, change it through `update`). */
  get current(): Readonly<ExoProcessState> {
    return this.value;
  }

  /** The state for the snapshot (a copy, with exo's last lines). */
  state(): ExoProcessState {
    return structuredClone({ ...this.value, lastLines: this.options.logs.lastLines().slice(-EXO_LAST_LINES_MAX) });
  }

  /** Calls `listener` with the new state after every change; returns the unsubscribe function. */
  subscribe(listener: (state: ExoProcessState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Status changes the table refused. */
  get refused(): number {
    return this.machine.refused;
  }

  /** The latest accepted and refused status changes (time, from, to, reason). */
  get transitionLog(): { accepted: readonly StateChange<ExoProcessStatus>[]; refused: readonly StateChange<ExoProcessStatus>[] } {
    return { accepted: this.machine.history, refused: this.machine.refusals };
  }

  update(patch: Partial<ExoProcessState>): void {
    // The status moves only through the table; a refused move is counted and recorded, the rest of the patch applies.
    if (patch.status !== undefined && patch.status !== this.machine.state) {
      if (!this.machine.transition(patch.status, patch.reason ?? patch.progress ?? this.value.reason ?? '')) {
        const { status: _refused, ...rest } = patch;
        patch = rest;
      }
    }
    this.value = { ...this.value, ...patch, ownsProcess: this.options.ownsProcess() };
    const state = this.state();
    for (const listener of this.listeners) listener(state);
  }
}
