/**
 * Runs this Mac's exo under exobar: starts it with the fast-synch value decided
 * beforehand, keeps its output, knows when it is ready, stops it cleanly (runners it
 * leaves behind included), restarts it after a crash with backoff, and refuses to
 * restart on top of runners that could not be stopped. The whole story is in one
 * {@link ExoProcessState} the snapshot carries as `exoProcess`. Rules:
 * docs/exo-process.md.
 *
 * This class orders the actions (one at a time) and decides what a crash means; its
 * parts, one concern each: the state and its status table (exo-process-state-store.ts),
 * the start as a list of steps (exo-launch.ts), the stop sequence (exo-stop.ts), the
 * spawned process and the runners it leaves (exo-child.ts), the automatic restarts
 * after a crash (exo-crash-restarts.ts), the fast-synch decision and its words
 * (exo-fast-synch-decision.ts), the timings (exo-timing.ts).
 */
import type { Logger } from 'pino';
import type { ExoProcessFailure, ExoProcessState, ExoProcessStatus } from '../../../shared/exo-process';
import type { ExoFastSynchPlan } from '../../../shared/exo-fast-synch';
import { EXO_API_PORT } from '../../../shared/addresses';
import type { Redactor } from '../diagnostics/redaction';
import { wedgedReason } from '../process/leftover-runners';
import type { StateChange } from '../process/state-machine';
import { describeExit, ExoChild, type ChildExit } from './exo-child';
import { ExoCrashRestarts } from './exo-crash-restarts';
import { DEFAULT_CRASH_POLICY, type ExoCrashPolicy } from './exo-crash-policy';
import { DEFAULT_EXO_SETTINGS, type ExoProcessSettings } from './exo-command';
import {
  checkFastSynchAgainst,
  decideFastSynch,
  EMPTY_PLAN,
  restartMessage,
  type ExoFastSynchCheck,
  type ExoRestartRequest,
  type FastSynchDecision,
  type SpanningInstance,
} from './exo-fast-synch-decision';
import { ExoLaunch } from './exo-launch';
import { ExoLogs, type ExoLogBundleFile, type ExoLogsOptions } from './exo-logs';
import { ExoProcessError } from './exo-process-error';
import { ExoProcessStateStore } from './exo-process-state-store';
import { stopExo } from './exo-stop';
import { DEFAULT_EXO_TIMING, stopBudgetMs, type ExoTiming } from './exo-timing';

export { DEFAULT_EXO_TIMING, type ExoTiming } from './exo-timing';
export { ExoProcessError } from './exo-process-error';
export { REFUSED_EXO_STATUS_CHANGE } from './exo-process-state-store';
export type { ExoFastSynchCheck, ExoRestartRequest, SpanningInstance } from './exo-fast-synch-decision';

/** exo's default API port. */
export const DEFAULT_EXO_API_PORT = EXO_API_PORT;

export interface ExoProcessManagerOptions {
  /** exobar's data directory: logs go to `<dataDir>/exo/`. */
  dataDir: string;
  /** `exo.command`, `exo.args`, `exo.env` (read at every start, so a settings change applies at the next one). */
  settings?: ExoProcessSettings | (() => ExoProcessSettings);
  apiPort?: number;
  /** The environment exo inherits before `exo.env` (default: exobar's own). */
  baseEnv?: NodeJS.ProcessEnv;
  timing?: Partial<ExoTiming>;
  crashPolicy?: Partial<ExoCrashPolicy>;
  logs?: ExoLogsOptions;
  now?: () => number;
  /** exobar's own logger (pino): a refused status change is written there once, at warn, besides exo's log folder. */
  logger?: Pick<Logger, 'warn'>;
}

export class ExoProcessManager {
  private readonly timing: ExoTiming;
  private readonly policy: ExoCrashPolicy;
  private readonly apiPort: number;
  private readonly now: () => number;
  private readonly logs: ExoLogs;
  private readonly store: ExoProcessStateStore;
  private readonly child: ExoChild;
  private readonly launcher: ExoLaunch;
  private readonly restarts: ExoCrashRestarts;

  private decision: FastSynchDecision | null = null;
  private lock: Promise<unknown> = Promise.resolve();
  /** Set by shutdown(): nothing starts any more. */
  private closed = false;

  constructor(private readonly options: ExoProcessManagerOptions) {
    this.timing = { ...DEFAULT_EXO_TIMING, ...options.timing };
    this.policy = { ...DEFAULT_CRASH_POLICY, ...options.crashPolicy };
    this.apiPort = options.apiPort ?? DEFAULT_EXO_API_PORT;
    this.now = options.now ?? Date.now;
    this.logs = new ExoLogs(options.dataDir, options.logs);
    this.child = new ExoChild(this.logs, this.timing, (progress) => this.store.update({ progress }));
    this.store = new ExoProcessStateStore({
      apiPort: this.apiPort,
      maxRestarts: this.policy.maxRestarts,
      now: this.now,
      logs: this.logs,
      ownsProcess: () => this.child.running,
      logger: options.logger,
    });
    this.launcher = new ExoLaunch({
      apiPort: this.apiPort,
      timing: this.timing,
      now: this.now,
      logs: this.logs,
      child: this.child,
      store: this.store,
      baseEnv: options.baseEnv ?? process.env,
      settings: () => this.settings(),
      exoEnv: () => this.exoEnv(),
      decision: () => this.decision!,
      closed: () => this.closed,
      fail: (failure, reason) => this.fail(failure, reason),
      startFailed: (failure, reason, automatic) => this.startFailed(failure, reason, automatic),
      needsAttention: (reason) => this.needsAttention(reason),
      stopNow: () => this.stopNow(),
      crashed: (exit) => void this.serial(() => this.crashed(exit)),
    });
    this.restarts = new ExoCrashRestarts({
      store: this.store,
      policy: this.policy,
      now: this.now,
      running: () => this.child.running,
      serial: (fn) => this.serial(fn),
      waitForPidfile: () => this.launcher.waitForPidfile(),
      launch: () => this.launcher.run(true),
    });
    this.logs.onLine((line) => this.launcher.readLine(line));
  }

  /** The state for the snapshot (a copy). */
  state(): ExoProcessState {
    return this.store.state();
  }

  /** Calls `listener` with the new state after every change; returns the unsubscribe function. */
  subscribe(listener: (state: ExoProcessState) => void): () => void {
    return this.store.subscribe(listener);
  }

  /** Status changes the table refused: a manager bug if ever non-zero. */
  get refusedTransitions(): number {
    return this.store.refused;
  }

  /** The latest accepted and refused status changes (time, from, to, reason), for the bundle. */
  get transitionLog(): { accepted: readonly StateChange<ExoProcessStatus>[]; refused: readonly StateChange<ExoProcessStatus>[] } {
    return this.store.transitionLog;
  }

  /** True while an exo that exobar spawned is alive; quitting exobar stops only such an exo. */
  get ownsProcess(): boolean {
    return this.child.running;
  }

  /**
   * Starts exo (the operator's start: the restart count starts again). The fast-synch
   * value comes from `plan` when given, else the last one decided, else "nothing
   * planned" (off). Resolves once exo runs or failed to start (see `failure`); throws
   * {@link ExoProcessError} `fast_synch_shared_gpu` for an unacknowledged risky override.
   * Does nothing while exo is starting or running.
   */
  async start(plan?: ExoFastSynchPlan): Promise<ExoProcessState> {
    const decision = plan ? decideFastSynch(plan) : (this.decision ?? decideFastSynch(EMPTY_PLAN));
    return this.serial(async () => {
      if (this.child.running || this.closed) return this.state();
      this.restarts.cancel();
      this.decision = decision;
      this.store.update({ restarts: { count: 0, max: this.policy.maxRestarts, nextAt: null } });
      // No wait for the pidfile here: a start the operator asks for says at once that another exo holds it.
      await this.launcher.run(false);
      return this.state();
    });
  }

  /**
   * Stops exo: SIGINT, wait, SIGTERM, wait, SIGKILL, then the runners it left behind.
   * Ends `stopped`, or `needs_attention` when runners had to be killed or survived.
   * Cancels a scheduled restart; a start under way is called off.
   */
  stop(): Promise<ExoProcessState> {
    this.restarts.cancel();
    this.launcher.abort('stopped');
    return this.serial(async () => {
      await this.stopNow();
      return this.state();
    });
  }

  /**
   * What `plan` means for the exo that runs now: the fast-synch value it needs and
   * whether exo must restart for it (exo reads EXO_FAST_SYNCH once, at start). A
   * needed restart is also put in the state (`restartNeeded`) for the views.
   */
  checkFastSynch(plan: ExoFastSynchPlan, spanningInstances: readonly SpanningInstance[] = []): ExoFastSynchCheck {
    const live = this.child.running ? (this.store.current.fastSynch?.enabled ?? null) : null;
    const check = checkFastSynchAgainst(plan, live, spanningInstances);
    if (!check.ok) return check;
    if (check.restartRequired) this.store.update({ restartNeeded: { fastSynch: check.enabled, reason: check.reason, message: check.message } });
    else if (this.store.current.restartNeeded) this.store.update({ restartNeeded: null });
    return check;
  }

  /**
   * Applies a plan's fast-synch value. exo not running: kept for the next start. Same
   * value: nothing to do. Other value: throws `exo_restart_required` (with the words
   * for the operator) unless `consent` is true, then restarts exo with it, waiting for
   * the pidfile to be released first.
   */
  async applyFastSynch(plan: ExoFastSynchPlan, request: { consent: boolean; spanningInstances?: readonly SpanningInstance[] }): Promise<ExoProcessState> {
    const check = this.checkFastSynch(plan, request.spanningInstances);
    if (!check.ok) throw new ExoProcessError(check.code, check.message);
    const decision = { enabled: check.enabled, reason: check.reason };
    if (!this.child.running) {
      this.decision = decision;
      return this.state();
    }
    if (!check.restartRequired) return this.state();
    if (!request.consent) throw new ExoProcessError('exo_restart_required', check.message);
    return this.restartWith(decision);
  }

  /**
   * Restarts exo on the operator's word. Without `consent: true` it throws
   * `exo_restart_required` with what a restart deletes. Waits for the pidfile between
   * the stop and the start; does not start when the stop ended in `needs_attention`.
   */
  async restart(request: ExoRestartRequest): Promise<ExoProcessState> {
    const decision = request.plan ? decideFastSynch(request.plan) : (this.decision ?? decideFastSynch(EMPTY_PLAN));
    if (!request.consent) {
      throw new ExoProcessError('exo_restart_required', restartMessage(decision, request.spanningInstances ?? [], 'restart'));
    }
    return this.restartWith(decision);
  }

  /** For quitting exobar: stops the exo exobar started, never one it only attached to (or that someone else started). */
  async shutdown(): Promise<void> {
    this.closed = true;
    this.restarts.cancel();
    this.launcher.abort('shutdown');
    // After whatever is under way (a start, a crash restart): stopNow signals only a process exobar spawned.
    await this.serial(() => this.stopNow());
    this.child.stopScanning();
    await this.logs.close();
  }

  /**
   * The longest a stop takes with these timings: exo's three signals and their waits,
   * then the leftover runners (stopped side by side), plus a margin. Quitting waits at
   * least this long before it falls back to {@link killNow}.
   */
  get stopBudgetMs(): number {
    return stopBudgetMs(this.timing);
  }

  /**
   * The last resort when exobar must exit now (a second Ctrl-C, a stop past its
   * deadline): SIGKILL to the process group of the exo exobar spawned (its runners are
   * in it unless they left it). Nothing when exobar does not own a live exo; an exo it
   * only attached to is never signalled. True when the signal was sent.
   */
  killNow(): boolean {
    return this.child.killNow();
  }

  /** Redacted tails of exo's stdout and stderr for the diagnostic bundle. */
  diagnosticLogTails(redactor: Redactor, capBytes?: number): ExoLogBundleFile[] {
    return this.logs.diagnosticTails(redactor, capBytes);
  }

  // ---- internals ----

  private restartWith(decision: FastSynchDecision): Promise<ExoProcessState> {
    this.restarts.cancel();
    this.launcher.abort('restarting');
    return this.serial(async () => {
      await this.stopNow();
      if (this.store.current.status === 'needs_attention') return this.state();
      this.decision = decision;
      this.store.update({ status: 'restarting', failure: null, restartNeeded: null, restarts: { count: 0, max: this.policy.maxRestarts, nextAt: null } });
      if (await this.launcher.waitForPidfile()) await this.launcher.run(false);
      return this.state();
    });
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn);
    this.lock = run.catch(() => undefined);
    return run;
  }

  private settings(): ExoProcessSettings {
    const s = this.options.settings;
    return typeof s === 'function' ? s() : (s ?? DEFAULT_EXO_SETTINGS);
  }

  private exoEnv(): NodeJS.ProcessEnv {
    return { ...(this.options.baseEnv ?? process.env), ...this.settings().env };
  }

  private fail(failure: ExoProcessFailure, reason: string): void {
    this.store.update({ status: 'crashed', failure, reason, progress: null, pid: null });
  }

  private startFailed(failure: ExoProcessFailure, reason: string, automatic: boolean): void {
    this.fail(failure, reason);
    if (automatic) this.restarts.schedule(reason);
  }

  private async crashed(exit: ChildExit): Promise<void> {
    this.child.stopScanning();
    const current = this.store.current;
    const ranFor = current.readyAt === null ? 0 : this.now() - current.readyAt;
    const reason = `exo exited on its own (${describeExit(exit)})`;
    this.store.update({
      status: 'crashed',
      failure: 'crashed',
      reason,
      pid: null,
      progress: null,
      exit: { code: exit.code, signal: exit.signal, at: this.now() },
    });
    const wedged = wedgedReason(await this.child.stopLeftRunners());
    if (wedged) return this.needsAttention(`${reason} and ${wedged}`);
    // A long healthy run forgives earlier crashes.
    if (ranFor >= this.policy.stableAfterMs) this.store.update({ restarts: { ...this.store.current.restarts, count: 0 } });
    this.restarts.schedule(reason);
  }

  private needsAttention(reason: string): void {
    this.restarts.cancel();
    this.store.update({
      status: 'needs_attention',
      failure: 'runners_left',
      reason: `${reason}. exobar will not restart exo on its own.`,
      pid: null,
      progress: null,
    });
  }

  /** The stop sequence (exo-stop.ts). */
  private stopNow(): Promise<void> {
    return stopExo({ store: this.store, child: this.child, timing: this.timing, now: this.now, needsAttention: (reason) => this.needsAttention(reason) });
  }
}
