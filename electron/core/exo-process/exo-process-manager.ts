/**
 * Runs this Mac's exo under exobar: starts it with the fast-synch value decided
 * beforehand, keeps its output, knows when it is ready, stops it cleanly (runners it
 * leaves behind included), restarts it after a crash with backoff, and refuses to
 * restart on top of runners that could not be stopped. The whole story is in one
 * {@link ExoProcessState} the snapshot carries as `exoProcess`. Rules:
 * docs/exo-process.md.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { EXO_LAST_LINES_MAX, type ExoProcessFailure, type ExoProcessState, type ExoProcessStatus } from '../../../shared/exo-process';
import { decideExoFastSynch, type ExoFastSynchPlan } from '../../../shared/exo-fast-synch';
import type { Redactor } from '../diagnostics/redaction';
import { restartVerdict } from '../process/restart-policy';
import { DEFAULT_CRASH_POLICY, type ExoCrashPolicy } from './exo-crash-policy';
import { buildExoCommand, DEFAULT_EXO_SETTINGS, type ExoCommand, type ExoProcessSettings } from './exo-command';
import { exoHomeDir, exoLogPath, exoPidfilePath, pidfileHolder } from './exo-home';
import { ExoLogs, type ExoLogBundleFile, type ExoLogsOptions } from './exo-logs';
import { classifyExoLine, lastFastSynchLine } from './exo-output';
import { stopLeftovers, wedgedReason, type LeftoverResult } from '../process/leftover-runners';
import { portInUse } from './port-check';
import { climbKillLadder, type KillRung } from '../process/kill-ladder';
import { StateMachine, type StateChange } from '../process/state-machine';
import { EXO_PROCESS_TRANSITIONS } from './exo-process-machine';
import { descendants, groupMembers, sendSignal } from '../process/process-identity';
import { waitForExoApi } from './readiness';
import { EXO_API_PORT } from '../../../shared/addresses';

/** exo's default API port. */
export const DEFAULT_EXO_API_PORT = EXO_API_PORT;

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

/** The message of the log record a refused exo status change writes. */
export const REFUSED_EXO_STATUS_CHANGE = 'refused exo status change';

/** A refusal the control API answers with `status` and `code` (OpenAI error shape). */
export class ExoProcessError extends Error {
  override name = 'ExoProcessError';
  constructor(
    /** fast_synch_shared_gpu: the override needs acknowledgeRisk. exo_restart_required: send consent: true. */
    readonly code: 'fast_synch_shared_gpu' | 'exo_restart_required',
    message: string,
    readonly status = 409,
  ) {
    super(message);
  }
}

/** An instance exo runs with a shard on this Mac (a restart deletes it). */
export interface SpanningInstance {
  id: string;
  model: string;
}

/** What a plan means for the exo that runs now. */
export type ExoFastSynchCheck =
  { ok: false; code: 'fast_synch_shared_gpu'; message: string } | { ok: true; enabled: boolean; reason: string; restartRequired: boolean; message: string };

export interface ExoRestartRequest {
  /** The operator agreed that the restart deletes the instances that span this Mac. */
  consent: boolean;
  /** A new plan for fast synch; the current value is kept without one. */
  plan?: ExoFastSynchPlan;
  spanningInstances?: readonly SpanningInstance[];
}

interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The spawn itself failed (ENOENT, EACCES): exo never ran. */
  spawnError: NodeJS.ErrnoException | null;
}

/** One start of exo as its steps see it: what each step found for the next. */
interface LaunchRun {
  automatic: boolean;
  exo: ExoCommand;
  child: ChildProcess | null;
  exited: Promise<ChildExit> | null;
  nodeId: string | null;
}

/** A launch step's answer: go on to the next step, or stop here (the step has said why). */
type LaunchStep = 'next' | 'halt';

interface Decision {
  enabled: boolean;
  reason: string;
}

const EMPTY_PLAN: ExoFastSynchPlan = { instances: [], override: 'auto', acknowledgeRisk: false };

function describeExit(exit: { code: number | null; signal: string | null }): string {
  if (exit.signal) return `killed by ${exit.signal}`;
  return `exit code ${exit.code ?? 'unknown'}`;
}

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

export class ExoProcessManager {
  private readonly timing: ExoTiming;
  private readonly policy: ExoCrashPolicy;
  private readonly apiPort: number;
  private readonly now: () => number;
  private readonly logs: ExoLogs;
  private current: ExoProcessState;
  private readonly listeners = new Set<(state: ExoProcessState) => void>();

  private decision: Decision | null = null;
  private child: ChildProcess | null = null;
  private childExit: Promise<ChildExit> | null = null;
  private childAlive = false;
  /** The exit of the child is exobar's doing (a stop), not a crash. */
  private expectingExit = false;
  /** exo's descendants seen while it ran: pid → start time. */
  private records = new Map<number, string>();
  private scanTimer: NodeJS.Timeout | null = null;
  private restartTimer: NodeJS.Timeout | null = null;
  private launchAbort: AbortController | null = null;
  /** Output signals of the current start (pidfile held, port taken) and its fast-synch line. */
  private seen = { pidfileHeld: false, portTaken: false, fastSynch: null as boolean | null };
  private lock: Promise<unknown> = Promise.resolve();
  /** Set by shutdown(): nothing starts any more. */
  private closed = false;
  /** The one status value (`current.status` mirrors it), written through the table. */
  private readonly machine: StateMachine<ExoProcessStatus>;

  constructor(private readonly options: ExoProcessManagerOptions) {
    this.timing = { ...DEFAULT_EXO_TIMING, ...options.timing };
    this.policy = { ...DEFAULT_CRASH_POLICY, ...options.crashPolicy };
    this.apiPort = options.apiPort ?? DEFAULT_EXO_API_PORT;
    this.now = options.now ?? Date.now;
    this.logs = new ExoLogs(options.dataDir, options.logs);
    this.machine = new StateMachine(
      EXO_PROCESS_TRANSITIONS,
      'idle',
      {
        changed: () => undefined,
        refused: (c) => {
          this.logs.note(`${REFUSED_EXO_STATUS_CHANGE} ${c.from} > ${c.to} (${c.reason})`);
          options.logger?.warn({ from: c.from, to: c.to, cause: c.reason }, REFUSED_EXO_STATUS_CHANGE);
        },
      },
      this.now,
    );
    this.logs.onLine((line) => this.readLine(line));
    this.current = {
      status: 'idle',
      ownsProcess: false,
      pid: null,
      command: null,
      apiPort: this.apiPort,
      startedAt: null,
      readyAt: null,
      nodeId: null,
      progress: null,
      fastSynch: null,
      exit: null,
      failure: null,
      reason: null,
      lastLines: [],
      restarts: { count: 0, max: this.policy.maxRestarts, nextAt: null },
      restartNeeded: null,
    };
  }

  /** The state for the snapshot (a copy). */
  state(): ExoProcessState {
    return structuredClone({ ...this.current, lastLines: this.logs.lastLines().slice(-EXO_LAST_LINES_MAX) });
  }

  /** Calls `listener` with the new state after every change; returns the unsubscribe function. */
  subscribe(listener: (state: ExoProcessState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Status changes the table refused: a manager bug if ever non-zero. */
  get refusedTransitions(): number {
    return this.machine.refused;
  }

  /** The latest accepted and refused status changes (time, from, to, reason), for the bundle. */
  get transitionLog(): { accepted: readonly StateChange<ExoProcessStatus>[]; refused: readonly StateChange<ExoProcessStatus>[] } {
    return { accepted: this.machine.history, refused: this.machine.refusals };
  }

  /** True while an exo that exobar spawned is alive; quitting exobar stops only such an exo. */
  get ownsProcess(): boolean {
    return this.childAlive;
  }

  /**
   * Starts exo (the operator's start: the restart count starts again). The fast-synch
   * value comes from `plan` when given, else the last one decided, else "nothing
   * planned" (off). Resolves once exo runs or failed to start (see `failure`); throws
   * {@link ExoProcessError} `fast_synch_shared_gpu` for an unacknowledged risky override.
   * Does nothing while exo is starting or running.
   */
  async start(plan?: ExoFastSynchPlan): Promise<ExoProcessState> {
    const decision = plan ? this.decide(plan) : (this.decision ?? this.decide(EMPTY_PLAN));
    return this.serial(async () => {
      if (this.childAlive || this.closed) return this.state();
      this.cancelRestart();
      this.decision = decision;
      this.update({ restarts: { count: 0, max: this.policy.maxRestarts, nextAt: null } });
      // No wait for the pidfile here: a start the operator asks for says at once that another exo holds it.
      await this.launch(false);
      return this.state();
    });
  }

  /**
   * Stops exo: SIGINT, wait, SIGTERM, wait, SIGKILL, then the runners it left behind.
   * Ends `stopped`, or `needs_attention` when runners had to be killed or survived.
   * Cancels a scheduled restart; a start under way is called off.
   */
  stop(): Promise<ExoProcessState> {
    this.cancelRestart();
    this.launchAbort?.abort(new Error('stopped'));
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
    const decision = decideExoFastSynch(plan);
    if (!decision.ok) return decision;
    const live = this.childAlive ? (this.current.fastSynch?.enabled ?? null) : null;
    if (live === null || live === decision.enabled) {
      if (this.current.restartNeeded) this.update({ restartNeeded: null });
      const message =
        live === null
          ? `exo will start with fast synch ${decision.enabled ? 'on' : 'off'} (${decision.reason})`
          : `exo already runs with fast synch ${live ? 'on' : 'off'}`;
      return { ok: true, enabled: decision.enabled, reason: decision.reason, restartRequired: false, message };
    }
    const message = restartMessage(decision, spanningInstances);
    this.update({ restartNeeded: { fastSynch: decision.enabled, reason: decision.reason, message } });
    return { ok: true, enabled: decision.enabled, reason: decision.reason, restartRequired: true, message };
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
    if (!this.childAlive) {
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
    const decision = request.plan ? this.decide(request.plan) : (this.decision ?? this.decide(EMPTY_PLAN));
    if (!request.consent) {
      throw new ExoProcessError('exo_restart_required', restartMessage(decision, request.spanningInstances ?? [], 'restart'));
    }
    return this.restartWith(decision);
  }

  /** For quitting exobar: stops the exo exobar started, never one it only attached to (or that someone else started). */
  async shutdown(): Promise<void> {
    this.closed = true;
    this.cancelRestart();
    this.launchAbort?.abort(new Error('shutdown'));
    // After whatever is under way (a start, a crash restart): stopNow signals only a process exobar spawned.
    await this.serial(() => this.stopNow());
    this.stopScanning();
    await this.logs.close();
  }

  /**
   * The longest a stop takes with these timings: exo's three signals and their waits,
   * then the leftover runners (stopped side by side), plus a margin. Quitting waits at
   * least this long before it falls back to {@link killNow}.
   */
  get stopBudgetMs(): number {
    const t = this.timing;
    return t.sigintGraceMs + t.sigtermGraceMs + t.sigkillWaitMs + t.runnerTermGraceMs + t.runnerKillWaitMs + 2_000;
  }

  /**
   * The last resort when exobar must exit now (a second Ctrl-C, a stop past its
   * deadline): SIGKILL to the process group of the exo exobar spawned (its runners are
   * in it unless they left it). Nothing when exobar does not own a live exo; an exo it
   * only attached to is never signalled. True when the signal was sent.
   */
  killNow(): boolean {
    const pid = this.child?.pid;
    if (!this.childAlive || pid === undefined) return false;
    this.expectingExit = true;
    return sendSignal(-pid, 'SIGKILL') || sendSignal(pid, 'SIGKILL');
  }

  /** Redacted tails of exo's stdout and stderr for the diagnostic bundle. */
  diagnosticLogTails(redactor: Redactor, capBytes?: number): ExoLogBundleFile[] {
    return this.logs.diagnosticTails(redactor, capBytes);
  }

  // ---- internals ----

  private decide(plan: ExoFastSynchPlan): Decision {
    const decision = decideExoFastSynch(plan);
    if (!decision.ok) throw new ExoProcessError(decision.code, decision.message);
    return { enabled: decision.enabled, reason: decision.reason };
  }

  private restartWith(decision: Decision): Promise<ExoProcessState> {
    this.cancelRestart();
    this.launchAbort?.abort(new Error('restarting'));
    return this.serial(async () => {
      await this.stopNow();
      if (this.current.status === 'needs_attention') return this.state();
      this.decision = decision;
      this.update({ status: 'restarting', failure: null, restartNeeded: null, restarts: { count: 0, max: this.policy.maxRestarts, nextAt: null } });
      if (await this.waitForPidfile()) await this.launch(false);
      return this.state();
    });
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn);
    this.lock = run.catch(() => undefined);
    return run;
  }

  private update(patch: Partial<ExoProcessState>): void {
    // The status moves only through the table; a refused move is counted and recorded, the rest of the patch applies.
    if (patch.status !== undefined && patch.status !== this.machine.state) {
      if (!this.machine.transition(patch.status, patch.reason ?? patch.progress ?? this.current.reason ?? '')) {
        const { status: _refused, ...rest } = patch;
        patch = rest;
      }
    }
    this.current = { ...this.current, ...patch, ownsProcess: this.childAlive };
    const state = this.state();
    for (const listener of this.listeners) listener(state);
  }

  private settings(): ExoProcessSettings {
    const s = this.options.settings;
    return typeof s === 'function' ? s() : (s ?? DEFAULT_EXO_SETTINGS);
  }

  private exoEnv(): NodeJS.ProcessEnv {
    return { ...(this.options.baseEnv ?? process.env), ...this.settings().env };
  }

  private readLine(line: string): void {
    const signal = classifyExoLine(line);
    if (!signal) return;
    if (signal.kind === 'pidfile_held') this.seen.pidfileHeld = true;
    else if (signal.kind === 'port_taken') this.seen.portTaken = true;
    else {
      this.seen.fastSynch = signal.enabled;
      if (this.current.fastSynch)
        this.update({ fastSynch: { ...this.current.fastSynch, observed: signal.enabled, mismatch: signal.enabled !== this.current.fastSynch.enabled } });
    }
  }

  /** Waits until no live process holds `~/.exo/exo.pid`; false (and the state says who holds it) on timeout. */
  private async waitForPidfile(): Promise<boolean> {
    const path = exoPidfilePath(this.exoEnv());
    const deadline = this.now() + this.timing.pidfileReleaseTimeoutMs;
    for (let holder = pidfileHolder(path); holder !== null; holder = pidfileHolder(path)) {
      if (this.now() >= deadline) {
        this.fail(
          'pidfile_held',
          `Another exo (pid ${holder}) still holds ${path} after ${seconds(this.timing.pidfileReleaseTimeoutMs)}: stop it, or attach to it instead of starting one`,
        );
        return false;
      }
      this.update({ progress: `waiting for ${path} to be released (held by pid ${holder})` });
      await new Promise((resolve) => setTimeout(resolve, this.timing.pollIntervalMs));
    }
    return true;
  }

  private fail(failure: ExoProcessFailure, reason: string): void {
    this.update({ status: 'crashed', failure, reason, progress: null, pid: null });
  }

  /**
   * One start of exo, as its steps in order; a step that answers `halt` ends the start
   * (it has set the state that says why). `automatic`: a crash restart, whose failure
   * schedules the next one.
   */
  private async launch(automatic: boolean): Promise<void> {
    const run: LaunchRun = { automatic, exo: this.announceLaunch(), child: null, exited: null, nodeId: null };
    const steps: ReadonlyArray<(run: LaunchRun) => LaunchStep | Promise<LaunchStep>> = [
      this.checkPortFree,
      this.checkPidfileFree,
      this.checkNotQuitting,
      this.spawnExo,
      this.waitUntilReady,
      this.markRunning,
    ];
    for (const step of steps) if ((await step.call(this, run)) === 'halt') return;
  }

  /** The command exo starts with (from the settings and the fast-synch decision), and the state that says a start is under way. */
  private announceLaunch(): ExoCommand {
    const decision = this.decision!;
    const exo = buildExoCommand(this.settings(), this.apiPort, decision.enabled, this.options.baseEnv ?? process.env);
    this.logs.clearLastLines();
    this.seen = { pidfileHeld: false, portTaken: false, fastSynch: null };
    this.records = new Map();
    this.update({
      status: 'starting',
      command: [exo.command, ...exo.args],
      pid: null,
      startedAt: null,
      readyAt: null,
      nodeId: null,
      // `exit` stays: after a crash restart the views still show how the last run ended.
      failure: null,
      reason: exo.dropped.length > 0 ? `exobar sets the API port and fast synch itself; ignored from exo.args: ${exo.dropped.join(' ')}` : null,
      progress: `checking that port ${this.apiPort} is free`,
      fastSynch: { enabled: decision.enabled, reason: decision.reason, observed: null, mismatch: false },
      restartNeeded: null,
    });
    return exo;
  }

  private async checkPortFree(run: LaunchRun): Promise<LaunchStep> {
    if (!(await portInUse(this.apiPort))) return 'next';
    this.startFailed(
      'port_taken',
      `Port ${this.apiPort} is already in use, so exo could not serve its API there: stop what listens on it (another exo?) or attach to it`,
      run.automatic,
    );
    return 'halt';
  }

  private checkPidfileFree(run: LaunchRun): LaunchStep {
    const pidfile = exoPidfilePath(run.exo.env);
    const holder = pidfileHolder(pidfile);
    if (holder === null) return 'next';
    this.startFailed('pidfile_held', `Another exo (pid ${holder}) holds ${pidfile}: only one exo runs per user; attach to it, or stop it first`, run.automatic);
    return 'halt';
  }

  private checkNotQuitting(): LaunchStep {
    if (!this.closed) return 'next';
    this.update({ status: 'stopped', reason: 'exobar is quitting', progress: null });
    return 'halt';
  }

  /** Spawns exo in its home, its output into the logs, its exit watched. */
  private spawnExo(run: LaunchRun): LaunchStep {
    const { exo } = run;
    const home = exoHomeDir(exo.env);
    mkdirSync(home, { recursive: true });
    this.logs.note(`starting: ${[exo.command, ...exo.args].join(' ')} (EXO_FAST_SYNCH=${exo.env.EXO_FAST_SYNCH})`);
    const startedAt = this.now();
    // detached: exo leads its own process group, so a Ctrl-C meant for exobar's terminal
    // does not reach it; exobar alone decides how exo stops.
    const child = spawn(exo.command, exo.args, { cwd: home, env: exo.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    this.expectingExit = false;
    this.childAlive = child.pid !== undefined;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => this.logs.append('stdout', chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => this.logs.append('stderr', chunk));
    const exited = new Promise<ChildExit>((resolve) => {
      child.once('error', (error: NodeJS.ErrnoException) => resolve({ code: null, signal: null, spawnError: error }));
      // 'close': the streams are drained too, so the last lines are in before the exit is handled.
      child.once('close', (code, signal) => resolve({ code, signal, spawnError: null }));
    }).then((exit) => {
      if (this.child === child) this.childAlive = false;
      this.logs.flush('stdout');
      this.logs.flush('stderr');
      return exit;
    });
    this.childExit = exited;
    if (child.pid !== undefined) {
      this.update({ pid: child.pid, startedAt, progress: 'started; waiting for its API' });
      this.startScanning(child.pid);
    }
    run.child = child;
    run.exited = exited;
    return 'next';
  }

  /** Waits for exo's API to answer, for exo to exit, or for the ready timeout (exo is then stopped). */
  private async waitUntilReady(run: LaunchRun): Promise<LaunchStep> {
    const abort = new AbortController();
    this.launchAbort = abort;
    const timer = setTimeout(() => abort.abort(new Error('timeout')), this.timing.readyTimeoutMs);
    const ready = waitForExoApi({
      port: this.apiPort,
      signal: abort.signal,
      intervalMs: this.timing.pollIntervalMs,
      onProgress: (step) => this.update({ progress: step }),
    }).then(
      (nodeId) => ({ nodeId }),
      () => null,
    );
    const outcome = await Promise.race([ready, run.exited!.then((exit) => ({ exit }))]);
    clearTimeout(timer);
    abort.abort(new Error('settled'));
    this.launchAbort = null;

    if (outcome && 'exit' in outcome) {
      await this.exitedDuringStart(outcome.exit, run.automatic);
      return 'halt';
    }
    if (outcome === null) {
      if (this.expectingExit || (abort.signal.reason instanceof Error && abort.signal.reason.message !== 'timeout')) return 'halt'; // stopped by exobar
      await this.stopNow();
      if (this.current.status === 'needs_attention') return 'halt';
      this.startFailed('not_ready', `exo's API did not answer on port ${this.apiPort} within ${seconds(this.timing.readyTimeoutMs)}; it was stopped`, run.automatic);
      return 'halt';
    }
    run.nodeId = outcome.nodeId;
    return 'next';
  }

  /** exo answers: running, its fast-synch line read, and from now on an exit is a crash. */
  private markRunning(run: LaunchRun): LaunchStep {
    const child = run.child;
    this.update({ status: 'running', readyAt: this.now(), nodeId: run.nodeId, progress: null, reason: this.current.reason });
    this.checkFastSynchLine(run.exo.env);
    void run.exited!.then((exit) => {
      if (this.child === child && !this.expectingExit) void this.serial(() => this.crashed(exit));
    });
    return 'next';
  }

  /** The "FAST_SYNCH forced ON|OFF" line: from exo's output, else from its own log (a quiet exo logs to the file only). */
  private checkFastSynchLine(env: NodeJS.ProcessEnv): void {
    let observed = this.seen.fastSynch;
    if (observed === null) {
      try {
        observed = lastFastSynchLine(readFileSync(exoLogPath(env), 'utf8'));
      } catch {
        observed = null;
      }
    }
    const fastSynch = this.current.fastSynch;
    if (fastSynch && observed !== null) this.update({ fastSynch: { ...fastSynch, observed, mismatch: observed !== fastSynch.enabled } });
  }

  private async exitedDuringStart(exit: ChildExit, automatic: boolean): Promise<void> {
    this.stopScanning();
    this.update({ pid: null, exit: exit.spawnError ? this.current.exit : { code: exit.code, signal: exit.signal, at: this.now() } });
    const command = this.current.command?.[0] ?? 'exo';
    if (exit.spawnError) {
      const code = exit.spawnError.code;
      const words =
        code === 'ENOENT'
          ? `The exo command "${command}" was not found: install exo, or set exo.command to its full path (for the app: EXO.app/Contents/Resources/exo/exo)`
          : code === 'EACCES'
            ? `The exo command "${command}" is not executable (permission denied)`
            : `exo could not be started: ${exit.spawnError.message}`;
      return this.startFailed('command_not_found', words, automatic);
    }
    if (this.expectingExit) return;
    const leftovers = await this.stopRecordedRunners(this.child?.pid);
    const wedged = wedgedReason(leftovers);
    if (wedged) return this.needsAttention(`exo exited during start (${describeExit(exit)}) and ${wedged}`);
    if (this.seen.pidfileHeld) {
      const holder = pidfileHolder(exoPidfilePath(this.exoEnv()));
      return this.startFailed(
        'pidfile_held',
        `Another exo${holder ? ` (pid ${holder})` : ''} holds exo's pidfile, so this one exited: attach to it, or stop it first`,
        automatic,
      );
    }
    if (this.seen.portTaken)
      return this.startFailed('port_taken', `exo could not bind its API port ${this.apiPort} (address already in use) and exited`, automatic);
    return this.startFailed(
      'exited_during_start',
      `exo exited during start (${describeExit(exit)}) before its API answered; its last lines say why`,
      automatic,
    );
  }

  private startFailed(failure: ExoProcessFailure, reason: string, automatic: boolean): void {
    this.fail(failure, reason);
    if (automatic) this.scheduleRestart(reason);
  }

  private async crashed(exit: ChildExit): Promise<void> {
    this.stopScanning();
    const ranFor = this.current.readyAt === null ? 0 : this.now() - this.current.readyAt;
    const reason = `exo exited on its own (${describeExit(exit)})`;
    this.update({ status: 'crashed', failure: 'crashed', reason, pid: null, progress: null, exit: { code: exit.code, signal: exit.signal, at: this.now() } });
    const leftovers = await this.stopRecordedRunners(this.child?.pid);
    const wedged = wedgedReason(leftovers);
    if (wedged) return this.needsAttention(`${reason} and ${wedged}`);
    // A long healthy run forgives earlier crashes.
    if (ranFor >= this.policy.stableAfterMs) this.update({ restarts: { ...this.current.restarts, count: 0 } });
    this.scheduleRestart(reason);
  }

  private needsAttention(reason: string): void {
    this.cancelRestart();
    this.update({
      status: 'needs_attention',
      failure: 'runners_left',
      reason: `${reason}. exobar will not restart exo on its own.`,
      pid: null,
      progress: null,
    });
  }

  private scheduleRestart(reason: string): void {
    const count = this.current.restarts.count;
    // This crash is failure count + 1: the kit's verdict restarts it with backoff until the cap.
    const verdict = restartVerdict(count + 1, this.policy);
    if (!verdict.restart) {
      this.update({
        status: 'crashed',
        reason: `${reason}; gave up after ${count} automatic restart${count === 1 ? '' : 's'}: start exo again once the cause is fixed`,
        restarts: { ...this.current.restarts, nextAt: null },
      });
      return;
    }
    const delay = verdict.delayMs;
    const nextAt = this.now() + delay;
    this.update({
      status: 'restarting',
      reason: `${reason}; restarting in ${seconds(delay)} (automatic restart ${count + 1} of ${this.policy.maxRestarts})`,
      restarts: { count, max: this.policy.maxRestarts, nextAt },
    });
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      void this.serial(async () => {
        if (this.current.status !== 'restarting' || this.childAlive) return;
        this.update({ restarts: { count: count + 1, max: this.policy.maxRestarts, nextAt: null } });
        if (!(await this.waitForPidfile())) return this.scheduleRestart(this.current.reason ?? reason);
        await this.launch(true);
      });
    }, delay);
  }

  private cancelRestart(): void {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    if (this.current.restarts.nextAt !== null) this.update({ restarts: { ...this.current.restarts, nextAt: null } });
  }

  private startScanning(pid: number): void {
    this.stopScanning();
    const scan = (): void => void this.recordDescendants(pid);
    scan();
    this.scanTimer = setInterval(scan, this.timing.childScanIntervalMs);
    this.scanTimer.unref();
  }

  private stopScanning(): void {
    if (this.scanTimer) clearInterval(this.scanTimer);
    this.scanTimer = null;
  }

  private async recordDescendants(pid: number): Promise<void> {
    for (const child of await descendants(pid)) this.records.set(child.pid, child.startTime);
  }

  /**
   * Stops what exo left behind: its descendants recorded while it ran, plus the members
   * of its process group now (a runner spawned after the last recording).
   */
  private async stopRecordedRunners(exoPid: number | undefined): Promise<LeftoverResult[]> {
    if (exoPid !== undefined) for (const member of await groupMembers(exoPid)) this.records.set(member.pid, member.startTime);
    const records = [...this.records].map(([pid, startTime]) => ({ pid, startTime }));
    if (records.length === 0) return [];
    this.update({ progress: `stopping runners exo left behind (${records.length} recorded)` });
    const results = await stopLeftovers(records, { termGraceMs: this.timing.runnerTermGraceMs, killWaitMs: this.timing.runnerKillWaitMs, pollMs: 100 });
    this.records = new Map();
    this.update({ progress: null });
    return results;
  }

  private async waitExit(ms: number): Promise<boolean> {
    if (!this.childAlive || !this.childExit) return true;
    let timer: NodeJS.Timeout | undefined;
    const done = await Promise.race([this.childExit.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)))]);
    clearTimeout(timer);
    return done;
  }

  /** The stop sequence; leaves the status stopped or needs_attention (or as it was when nothing ran). */
  private async stopNow(): Promise<void> {
    const child = this.child;
    if (!child || !this.childAlive || child.pid === undefined) {
      if (this.current.status === 'starting' || this.current.status === 'running' || this.current.status === 'restarting') {
        this.update({ status: 'stopped', reason: 'stopped by exobar', progress: null, pid: null });
      }
      return;
    }
    const pid = child.pid;
    this.expectingExit = true;
    this.update({ status: 'stopping', progress: 'asking exo to stop (SIGINT)' });
    await this.recordDescendants(pid);
    const ladder: KillRung[] = [
      { signal: 'SIGINT', waitMs: this.timing.sigintGraceMs },
      { signal: 'SIGTERM', waitMs: this.timing.sigtermGraceMs },
      { signal: 'SIGKILL', waitMs: this.timing.sigkillWaitMs },
    ];
    const climbed = await climbKillLadder(ladder, {
      send: (signal) => sendSignal(pid, signal),
      waitExit: (ms) => this.waitExit(ms),
      beforeRung: async (rung, previous) => {
        if (previous) {
          this.update({ progress: `exo did not stop within ${seconds(previous.waitMs)} of ${previous.signal}: ${rung.signal}` });
          await this.recordDescendants(pid);
        }
      },
    });
    const how = climbed.signal ?? 'SIGINT';
    this.stopScanning();
    const exit = this.childAlive ? null : await this.childExit;
    this.update({ pid: null, exit: exit ? { code: exit.code, signal: exit.signal, at: this.now() } : this.current.exit });
    const leftovers = await this.stopRecordedRunners(this.child?.pid);
    const wedged = wedgedReason(leftovers);
    if (this.childAlive) return this.needsAttention(`exo (pid ${pid}) is still alive after SIGKILL`);
    if (wedged) return this.needsAttention(`exo stopped (${how}) and ${wedged}`);
    const stoppedRunners = leftovers.filter((r) => r.outcome === 'exited').length;
    this.update({
      status: 'stopped',
      failure: null,
      progress: null,
      reason: `stopped by exobar (${how}${how === 'SIGINT' ? ', graceful' : ''})${stoppedRunners > 0 ? `; ${stoppedRunners} runner${stoppedRunners > 1 ? 's' : ''} left behind stopped on SIGTERM` : ''}`,
    });
  }
}

function restartMessage(decision: Decision, spanning: readonly SpanningInstance[], why: 'fast_synch' | 'restart' = 'fast_synch'): string {
  const lead =
    why === 'fast_synch'
      ? `exo must restart to turn fast synch ${decision.enabled ? 'on' : 'off'} (${decision.reason}): exo reads EXO_FAST_SYNCH once, when it starts.`
      : `Restarting exo (fast synch ${decision.enabled ? 'on' : 'off'}: ${decision.reason}).`;
  const lost =
    spanning.length === 0
      ? 'A restart deletes every instance that spans this Mac (exo removes instances whose node left the cluster).'
      : `A restart deletes every instance that spans this Mac: ${spanning.map((i) => `${i.model} (${i.id})`).join(', ')}.`;
  return `${lead} ${lost} Send "consent": true to restart.`;
}
