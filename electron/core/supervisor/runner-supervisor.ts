/**
 * RunnerSupervisor: owns one instance's runner process across restarts.
 *
 * The rule this product exists for (exo's supervisor fix): nothing here ever makes a
 * caller wait for a generation task's acknowledgement. A runner busy with a long
 * prefill acknowledges only when its step ends; exo's worker awaited that ack inside
 * the one planning loop of the node and stalled every other model for ~15 s.
 * So generation tasks are recorded in the task ledger (task-ledger.ts, with the
 * held→sent rule of cancels) and written at once; lifecycle
 * steps (hello, load, warm-up) are awaited only inside this supervisor's own flow,
 * each with a deadline.
 */
import { join } from 'node:path';
import type { Logger } from 'pino';
import { reportedFastSynchDiffers } from '../../../shared/instance-state';
import {
  DEFAULT_PREFILL_CHUNK_TOKENS,
  MAX_DECODE_BATCH,
  MIN_PROTOCOL_VERSION,
  PACING_PROTOCOL_VERSION,
  PROTOCOL_VERSION,
  type Chunk,
  type Hello,
  type PrefillPacing,
  type RunnerOutput,
  type RunnerStatus,
  type PromptCacheStats,
  type RunnerSchedule,
  type SimProfileName,
  type Task,
  type TaskStatus,
} from '../../../shared/runner-protocol';
import type { RunnerExitCause, RunnerExitSnapshot, RunnerState } from '../../../shared/snapshot';
import { countPromptTokens } from '../../../shared/token-count';
import { TaskLedger, type InProgressTask, type PendingCancel } from './task-ledger';
import { LogTail } from '../process/log-tail';
import { RunnerProcess, type RunnerExit } from './runner-process';
import { FailureWindow } from '../process/restart-policy';
import { DEFAULT_FAILURE_WINDOW_MS, decideAfterDown, type DownCause, type RestartPolicy } from './runner-restart-decision';
import { RunnerRates, type RatePrior } from './runner-rates';
import { RunnerStateMachine, STARTUP_STATES, UP_STATES, type RunnerStateChange } from './runner-state-machine';
import type { SpawnSpec } from './spawn-spec';
import { Watchdog, watchdogDeadlineMs, type WatchdogFiring, type WatchdogLimits, type WatchdogPhase, type WatchdogWork } from './watchdog';

/** exo's prefill chunk: the longest prefill step between two progress lines. */
const PREFILL_CHUNK_TOKENS = DEFAULT_PREFILL_CHUNK_TOKENS;
/** exo's batch: requests decoding together at most. */
const MAX_BATCH = MAX_DECODE_BATCH;

type GenerationTask = Extract<Task, { kind: 'TextGeneration' }>;

export { WEDGED_GPU_ADVICE, type DownCause, type RestartPolicy } from './runner-restart-decision';

const EXIT_CAUSES: Record<DownCause, RunnerExitCause> = {
  crashed: 'crashed',
  stuck: 'stuck',
  fast_synch_mismatch: 'startup_failed',
  startup_failed: 'startup_failed',
  stopped: 'stopped',
};

/** A lifecycle step that failed; `repeats` when trying again would fail the same way (the runner said why). */
class LifecycleFailure extends Error {
  constructor(
    message: string,
    readonly repeats: boolean,
  ) {
    super(message);
  }
}

export interface SupervisorOptions {
  instanceId: string;
  /** Built anew for each (re)start: the policy's environment is decided before spawn. */
  spawnSpec: () => SpawnSpec;
  /** The fast-synch value the policy decided; the runner's hello must report the same. */
  expectedFastSynch: () => boolean;
  /** Directory for stdout.log and stderr.log; null keeps logs in memory only. */
  logDir: string | null;
  /** Keep generated text in stdout.log; false writes each token's length instead (privacy). */
  logGeneratedText?: boolean;
  watchdog: WatchdogLimits;
  /** The catalog's figures for this model in real ms: the prior of the learned rates. */
  rates: RatePrior;
  /** Other runners computing on this GPU now: each stretches the watchdog's deadline. */
  gpuSharers?: () => number;
  restart: RestartPolicy;
  helloTimeoutMs?: number;
  ackTimeoutMs?: number;
  /** Where each runner's pid and start time are recorded, so a later exobar can stop orphans. */
  processes?: { started(instanceId: string, pid: number): Promise<void>; ended(pid: number): void };
  /** Makes the runner process (tests substitute one whose terminate fails, as on a wedged GPU). */
  createProcess?: (...args: ConstructorParameters<typeof RunnerProcess>) => RunnerProcess;
  /** How long a Shutdown may take before the process group gets SIGTERM. */
  shutdownGraceMs?: number;
  /** The model this runner serves, named in exobar's log. */
  model?: string;
  /** exobar's own logger (pino): a refused transition is written there once, at warn. */
  logger?: Pick<Logger, 'warn'>;
}

/** The message of the log record a refused runner transition writes. */
export const REFUSED_RUNNER_TRANSITION = 'refused runner transition';

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
  /** The runner's prompt cache after a request's prefill (protocol 3). */
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

export type { InProgressTask, PendingCancel } from './task-ledger';

class LifecycleAbort extends Error {}

export class RunnerSupervisor {
  /** The runner's own last status as it reported it (the supervisor adds its own at spawn, hello, failure and shutdown). */
  runnerStatus: RunnerStatus = { kind: 'RunnerIdle' };
  pid: number | null = null;
  restarts = 0;
  malformedLines = 0;
  lastExit: RunnerExitSnapshot | null = null;
  /** When the scheduled restart happens (epoch ms), while restarting. */
  restartAt: number | null = null;
  /** Why the runner is failed for good or needs attention, and what to do; null otherwise. */
  attention: string | null = null;
  /** The one lifecycle value: written only through `machine.transition`. */
  private readonly machine: RunnerStateMachine;
  /** Why the runner last went down (cause and words), until the next start: what a request gets while it is down for good. */
  lastDown: { cause: DownCause; message: string } | null = null;
  /** The fast-synch value the current runner reported in its hello. */
  reportedFastSynch: boolean | null = null;
  /** The protocol version the current runner said in its hello; null before it. */
  protocolVersion: number | null = null;
  /** The generation tasks in progress and their pending cancels (task-ledger.ts). */
  private readonly ledger = new TaskLedger();
  readonly logs: { stdout: LogTail; stderr: LogTail };

  private process: RunnerProcess | null = null;
  /** Every process this supervisor started that has not exited yet (one being stopped included). */
  private readonly started = new Set<RunnerProcess>();
  /** When each recent crash or stuck happened (Date.now()), for the failure cap. */
  private readonly failures: FailureWindow;
  /** The runner's own words when it reported RunnerFailed. */
  private runnerFailedMessage: string | null = null;
  /** Error chunks of lifecycle tasks (a runner sends them under the task id). */
  private lifecycleErrors = new Map<string, string>();
  private restartTimer: NodeJS.Timeout | null = null;
  private lifecycleWaiters = new Map<string, { ack: () => void; done: (status: TaskStatus) => void; fail: (e: Error) => void }>();
  private helloWaiter: ((hello: Extract<RunnerOutput, { type: 'Hello' }>) => void) | null = null;
  private lifecycleTaskOpen = false;
  private readonly watchdog: Watchdog;
  /** This runner's measured speed, kept across restarts (same model, same Mac). */
  readonly rates: RunnerRates;
  /** When the last prefill progress arrived: a prefill between two tokens is not a decode step. */
  private lastPrefillAt = 0;
  private taskCounter = 0;
  /** Bumped on every spawn: events of a previous process are ignored. */
  private epoch = 0;

  constructor(
    private readonly options: SupervisorOptions,
    private readonly emit: (event: SupervisorEvent) => void,
  ) {
    const logFile = (name: string) => (options.logDir ? join(options.logDir, name) : null);
    this.logs = {
      stdout: new LogTail({ filePath: logFile('stdout.log') }),
      stderr: new LogTail({ filePath: logFile('stderr.log') }),
    };
    this.rates = new RunnerRates(options.rates);
    this.failures = new FailureWindow(options.restart.windowMs ?? DEFAULT_FAILURE_WINDOW_MS);
    this.machine = new RunnerStateMachine({
      changed: (change) => this.emit({ type: 'state', ...change }),
      refused: (change) => {
        this.logs.stderr.append(`[exobar] refused runner transition ${change.from} > ${change.to} (${change.reason})\n`);
        options.logger?.warn(
          { instanceId: options.instanceId, model: options.model ?? null, from: change.from, to: change.to, cause: change.reason },
          REFUSED_RUNNER_TRANSITION,
        );
        this.emit({ type: 'state_refused', ...change });
      },
    });
    this.watchdog = new Watchdog(
      options.watchdog,
      () => this.currentDeadline(),
      (firing) => this.onStuck(firing),
    );
  }

  /** Starts the runner in the background; progress arrives as events. Never throws. */
  start(): void {
    if (this.machine.in(UP_STATES)) return;
    void this.launch('started');
  }

  /** The runner's state (starting … stopped): the one value every view derives from. */
  get runnerState(): RunnerState {
    return this.machine.state;
  }

  /** True while the runner takes new requests (ready or running). */
  get serving(): boolean {
    return this.machine.in(['ready', 'running']);
  }

  /** Transitions the table refused so far: a supervisor bug if ever non-zero. */
  get refusedTransitions(): number {
    return this.machine.refused;
  }

  /** The latest accepted and refused transitions (time, from, to, reason), for the bundle. */
  get transitionLog(): { accepted: readonly RunnerStateChange[]; refused: readonly RunnerStateChange[] } {
    return { accepted: this.machine.history, refused: this.machine.refusals };
  }

  /**
   * A relaunch is coming: the runner stops taking new requests (they wait in the node's
   * queue) and finishes those in flight. False when it is not up.
   */
  drain(reason = 'a relaunch waits for the requests in flight'): boolean {
    if (!this.machine.in(UP_STATES)) return false;
    return this.machine.transition('draining', reason);
  }

  /**
   * The operator's retry of a runner that failed for good or needs attention: the
   * failure count starts over and a new process starts. False when there is nothing to retry.
   */
  retry(): boolean {
    const state = this.machine.state;
    if (state !== 'failed' && state !== 'needs_attention') return false;
    this.failures.clear();
    this.attention = null;
    void this.launch('the operator retried');
    return true;
  }

  /**
   * Records a generation task as in progress and writes it to the runner. Returns at
   * once: the acknowledgement comes later as an event (exo's fix for the stalled worker).
   */
  submitGeneration(task: GenerationTask): void {
    // Only work reaching an idle runner starts the clock; more work never resets it.
    const wasIdle = this.currentWork() === null;
    this.ledger.add(task, countPromptTokens(task.params.messages));
    if (wasIdle) this.watchdog.workStartedWhileIdle();
    this.machine.transition('running', 'requests in progress');
    this.process?.send(task);
  }

  /**
   * Cancels a generation task. Unacknowledged: held and sent on the ack, because a
   * runner drops cancels for tasks it has not admitted (exo measured 0 of 2 stopped).
   * Acknowledged: sent at once, pending until the runner confirms.
   */
  cancel(taskId: string): boolean {
    const step = this.ledger.cancel(taskId);
    if (step === 'held') this.emit({ type: 'cancel_held', taskId });
    else if (step === 'send') this.sendCancel(taskId);
    return step !== 'unknown';
  }

  /** The generation tasks in progress, by task id. */
  get inProgress(): ReadonlyMap<string, InProgressTask> {
    return this.ledger.inProgress;
  }

  /** The cancels pending (held until the ack, or sent), by task id. */
  get pendingCancels(): ReadonlyMap<string, PendingCancel> {
    return this.ledger.pendingCancels;
  }

  /** Whether the current runner applies SetPrefillPacing (protocol 2 or later). */
  get supportsPacing(): boolean {
    return this.protocolVersion !== null && this.protocolVersion >= PACING_PROTOCOL_VERSION;
  }

  /**
   * Asks the runner to prefill with `pacing` from its next chunk on; the runner
   * acknowledges with a `pacing_applied` event. Returns the pacing id, or null when the
   * runner cannot take it (an older protocol, or no runner up): nothing is sent then.
   */
  setPrefillPacing(pacing: PrefillPacing): string | null {
    if (!this.supportsPacing || !this.process?.alive || !this.machine.in(UP_STATES)) return null;
    const pacingId = this.nextTaskId('pacing');
    this.process.send({ kind: 'SetPrefillPacing', pacingId, ...pacing });
    return pacingId;
  }

  nextTaskId(prefix: string): string {
    this.taskCounter += 1;
    return `${this.options.instanceId}-${prefix}-${this.taskCounter}`;
  }

  /**
   * Stops the runner: Shutdown, then SIGTERM and SIGKILL to its process group if it
   * does not exit in time. In-flight tasks are reported lost with `cause`.
   */
  async stop(cause: DownCause = 'stopped', message = 'the runner was stopped'): Promise<void> {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    this.restartAt = null;
    // Stopping before the Shutdown goes out: no view says serving while it stops.
    if (this.machine.state !== 'stopped') this.machine.transition('stopping', message);
    this.watchdog.stop();
    const proc = this.process;
    this.abortLifecycle('the runner is stopping');
    this.failInFlight(cause, message);
    if (proc?.alive) {
      this.setRunnerStatus({ kind: 'RunnerShuttingDown' });
      proc.send({ kind: 'Shutdown', taskId: this.nextTaskId('shutdown') });
      const exit = (await proc.waitForExit(this.options.shutdownGraceMs ?? 3000)) ?? (await proc.terminate()).exit;
      this.lastExit = exitSnapshot(cause, exit, message);
    }
    this.process = null;
    this.pid = null;
    this.attention = null;
    this.machine.transition('stopped', message);
    this.setRunnerStatus({ kind: 'RunnerShutdown' });
  }

  /**
   * The pids of this supervisor's runner processes that are still alive, read now: a
   * runner being stopped or terminated counts until it has exited (a last-resort kill
   * must reach exactly those).
   */
  livePids(): number[] {
    for (const proc of this.started) if (!proc.alive) this.started.delete(proc);
    return [...this.started].flatMap((proc) => (proc.pid === null ? [] : [proc.pid]));
  }

  /** Stops the current process and starts a new one (a new environment included). */
  async relaunch(): Promise<void> {
    await this.stop('stopped', 'the runner was relaunched');
    this.failures.clear();
    this.start();
  }

  async dispose(): Promise<void> {
    await this.stop();
    await Promise.all([this.logs.stdout.close(), this.logs.stderr.close()]);
  }

  private async launch(reason: string): Promise<void> {
    this.epoch += 1;
    const epoch = this.epoch;
    this.reportedFastSynch = null;
    this.protocolVersion = null;
    this.runnerFailedMessage = null;
    this.lifecycleErrors.clear();
    this.restartAt = null;
    this.lastDown = null;
    this.machine.transition('starting', reason);
    this.setRunnerStatus({ kind: 'RunnerConnecting' });
    const spec = this.options.spawnSpec();
    const create = this.options.createProcess ?? ((...args: ConstructorParameters<typeof RunnerProcess>) => new RunnerProcess(...args));
    const proc = create(
      spec,
      this.logs,
      {
        onMessage: (message) => epoch === this.epoch && this.onMessage(message),
        onMalformedLine: (reason, line) => {
          if (epoch !== this.epoch) return;
          this.watchdog.outputSeen();
          this.malformedLines += 1;
          this.logs.stderr.append(`[exobar] malformed runner line (${reason}): ${line.slice(0, 200)}\n`);
          this.emit({ type: 'malformed_line', reason });
        },
        onExit: (exit) => {
          if (proc.pid !== null) this.options.processes?.ended(proc.pid);
          if (epoch === this.epoch) this.onExit(exit);
        },
      },
      { logGeneratedText: this.options.logGeneratedText ?? false },
    );
    this.process = proc;
    this.started.add(proc);
    this.pid = proc.pid;
    if (proc.pid !== null) void this.options.processes?.started(this.options.instanceId, proc.pid).catch(() => undefined);
    this.emit({ type: 'spawned', pid: proc.pid });
    this.watchdog.start();
    try {
      const hello = await this.waitForHello(this.options.helloTimeoutMs ?? 15_000);
      if (hello.protocolVersion < MIN_PROTOCOL_VERSION || hello.protocolVersion > PROTOCOL_VERSION) {
        const speaks = `${MIN_PROTOCOL_VERSION}-${PROTOCOL_VERSION}`;
        await this.goDown('startup_failed', `runner speaks protocol ${hello.protocolVersion}, exobar ${speaks}: install matching versions`, null);
        return;
      }
      // An older runner is served as before; only what it lacks (pacing) is not sent.
      this.protocolVersion = hello.protocolVersion;
      this.reportedFastSynch = hello.fastSynch;
      this.emit({
        type: 'hello',
        fastSynch: hello.fastSynch,
        engine: hello.engine,
        schedule: hello.schedule ?? 'exo',
        promptCache: hello.promptCache ?? null,
        features: hello.features,
        simProfile: hello.simProfile ?? null,
      });
      const expected = this.options.expectedFastSynch();
      if (reportedFastSynchDiffers(expected, hello.fastSynch)) {
        const message =
          `runner reports MLX_METAL_FAST_SYNCH=${hello.fastSynch ? 1 : 0} but the policy decided ${expected ? 1 : 0}: ` +
          'refusing to use it (check what overrides the environment of the runner)';
        await this.goDown('fast_synch_mismatch', message, null);
        return;
      }
      this.setRunnerStatus({ kind: 'RunnerConnected' });
      this.machine.transition('loading', 'the runner said hello');
      await this.runLifecycleTask({ kind: 'LoadModel', taskId: this.nextTaskId('load') });
      this.machine.transition('warming_up', 'the model is loaded');
      await this.runLifecycleTask({ kind: 'StartWarmup', taskId: this.nextTaskId('warmup') });
      if (epoch !== this.epoch || this.machine.state !== 'warming_up') return;
      this.machine.transition('ready', 'warmed up');
      this.emit({ type: 'ready' });
    } catch (error) {
      if (epoch !== this.epoch || error instanceof LifecycleAbort) return;
      // The runner's own words when it gave them: that failure would repeat, so no retry.
      const repeats = error instanceof LifecycleFailure && error.repeats;
      await this.goDown(repeats ? 'startup_failed' : 'crashed', `runner failed to start: ${(error as Error).message}`, null);
    }
  }

  private waitForHello(timeoutMs: number): Promise<Extract<RunnerOutput, { type: 'Hello' }>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => settle(new Error(`no hello within ${timeoutMs} ms`)), timeoutMs);
      const settle = (result: Extract<RunnerOutput, { type: 'Hello' }> | Error) => {
        clearTimeout(timer);
        this.helloWaiter = null;
        this.lifecycleWaiters.delete('hello');
        if (result instanceof Error) reject(result);
        else resolve(result);
      };
      this.helloWaiter = settle;
      this.lifecycleWaiters.set('hello', { ack: () => undefined, done: () => undefined, fail: settle });
    });
  }

  /** Sends a lifecycle task and waits for its ack (deadline) and its completion (watchdog). */
  private runLifecycleTask(task: Exclude<Task, GenerationTask>): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const ackTimeout = this.options.ackTimeoutMs ?? 15_000;
      const timer = setTimeout(() => fail(new LifecycleFailure(`${task.kind} was not acknowledged within ${ackTimeout} ms`, false)), ackTimeout);
      const fail = (e: Error) => {
        clearTimeout(timer);
        this.lifecycleWaiters.delete(task.taskId);
        this.lifecycleTaskOpen = false;
        reject(e);
      };
      this.lifecycleWaiters.set(task.taskId, {
        ack: () => clearTimeout(timer),
        done: (status) => {
          clearTimeout(timer);
          this.lifecycleWaiters.delete(task.taskId);
          this.lifecycleTaskOpen = false;
          if (status === 'Complete') resolve();
          else {
            const words = this.lifecycleErrors.get(task.taskId) ?? this.runnerFailedMessage;
            reject(new LifecycleFailure(words ?? `${task.kind} ended ${status}`, words !== null));
          }
        },
        fail,
      });
      this.lifecycleTaskOpen = true;
      this.process?.send(task);
    });
  }

  private abortLifecycle(message: string): void {
    for (const waiter of [...this.lifecycleWaiters.values()]) waiter.fail(new LifecycleAbort(message));
    this.lifecycleWaiters.clear();
    this.lifecycleTaskOpen = false;
  }

  private onMessage(message: RunnerOutput): void {
    const now = performance.now();
    const sinceLastLineMs = this.watchdog.silentMs(now);
    this.watchdog.outputSeen();
    switch (message.type) {
      case 'Hello':
        this.helloWaiter?.(message);
        return;
      case 'RunnerStatusUpdated':
        if (message.status.kind === 'RunnerFailed') this.runnerFailedMessage = message.status.errorMessage;
        this.setRunnerStatus(message.status);
        return;
      case 'TaskAcknowledged': {
        const lifecycle = this.lifecycleWaiters.get(message.taskId);
        if (lifecycle) return lifecycle.ack();
        const acked = this.ledger.acknowledged(message.taskId);
        if (!acked) return;
        this.emit({ type: 'ack', taskId: message.taskId });
        // A cancel held while the runner could not know the task goes out now.
        if (acked.sendHeldCancel) this.sendCancel(message.taskId);
        return;
      }
      case 'TaskStatusUpdated': {
        const lifecycle = this.lifecycleWaiters.get(message.taskId);
        if (lifecycle) {
          if (message.status !== 'Running' && message.status !== 'Pending') lifecycle.done(message.status);
          return;
        }
        if (!this.ledger.inProgress.has(message.taskId)) return;
        if (message.status === 'Running' || message.status === 'Pending') return;
        this.ledger.ended(message.taskId);
        this.emit({ type: 'task_status', taskId: message.taskId, status: message.status });
        if (this.ledger.inProgress.size === 0 && this.machine.state === 'running') this.machine.transition('ready', 'no request in progress');
        return;
      }
      case 'PromptCacheStats':
        this.emit({ type: 'prompt_cache', stats: message });
        return;
      case 'PrefillPacingApplied': {
        const { pacingId, chunkTokens, pauseMs, commandId } = message;
        this.emit({ type: 'pacing_applied', pacingId, pacing: { chunkTokens, pauseMs }, commandId });
        return;
      }
      case 'ChunkGenerated': {
        if (message.chunk.kind === 'ErrorChunk' && this.lifecycleWaiters.has(message.commandId)) {
          this.lifecycleErrors.set(message.commandId, message.chunk.errorMessage);
          return;
        }
        const entry = this.ledger.byCommandId(message.commandId);
        if (!entry) return;
        this.learnRates(entry, message.chunk, sinceLastLineMs, now);
        if (message.chunk.kind === 'TokenChunk') entry.tokens += 1;
        this.emit({ type: 'chunk', taskId: entry.task.taskId, chunk: message.chunk });
        return;
      }
    }
  }

  private sendCancel(taskId: string): void {
    this.ledger.cancelSent(taskId);
    this.process?.send({ kind: 'CancelTask', cancelledTaskId: taskId });
    this.emit({ type: 'cancel_sent', taskId });
  }

  private setRunnerStatus(status: RunnerStatus): void {
    this.runnerStatus = status;
    this.emit({ type: 'runner_status', status });
  }

  /** Prefill chunks give seconds per prompt token; consecutive tokens of one request give the decode step. */
  private learnRates(entry: InProgressTask, chunk: Chunk, sinceLastLineMs: number, now: number): void {
    if (chunk.kind === 'PrefillProgressChunk') {
      const tokens = chunk.processedTokens - entry.processed;
      this.rates.recordPrefillChunk(tokens, sinceLastLineMs, entry.processed === 0);
      entry.processed = chunk.processedTokens;
      entry.promptTokens = chunk.totalTokens;
      this.lastPrefillAt = now;
    } else if (chunk.kind === 'TokenChunk') {
      if (entry.lastTokenAt !== null && this.lastPrefillAt < entry.lastTokenAt) {
        this.rates.recordDecodeStep(now - entry.lastTokenAt, this.decodingCount());
      }
      entry.lastTokenAt = now;
    }
  }

  private decodingCount(): number {
    return Math.min(MAX_BATCH, Math.max(1, this.ledger.decoding()));
  }

  /** What the runner is working on, for the watchdog; null when it is idle (silence is normal then). */
  private currentWork(): WatchdogWork | null {
    if (!this.machine.in(UP_STATES)) return null;
    if (this.machine.in(STARTUP_STATES) || this.lifecycleTaskOpen) return { phase: 'lifecycle' };
    if (this.ledger.inProgress.size === 0) return null;
    let prefillTokens = -1;
    for (const entry of this.ledger.inProgress.values()) {
      if (entry.tokens > 0) continue;
      prefillTokens = Math.max(prefillTokens, Math.min(PREFILL_CHUNK_TOKENS, Math.max(0, entry.promptTokens - entry.processed)));
    }
    const batch = this.decodingCount();
    if (prefillTokens >= 0) return { phase: 'prefill', expectedStepMs: this.rates.prefillStepMs(prefillTokens, batch) };
    return { phase: 'decode', expectedStepMs: this.rates.decodeStepMs(batch) };
  }

  private currentDeadline(): { phase: WatchdogPhase; deadlineMs: number } | null {
    const work = this.currentWork();
    if (work === null) return null;
    return { phase: work.phase, deadlineMs: watchdogDeadlineMs(this.options.watchdog, work, this.options.gpuSharers?.() ?? 0) };
  }

  private onStuck({ phase, silentMs, deadlineMs }: WatchdogFiring): void {
    this.emit({ type: 'watchdog', phase, silentMs, deadlineMs });
    const seconds = (ms: number) => (ms / 1000).toFixed(1);
    void this.goDown('stuck', `runner stuck: no output for ${seconds(silentMs)} s during ${phase} (watchdog deadline ${seconds(deadlineMs)} s)`, null);
  }

  private onExit(exit: RunnerExit): void {
    if (!this.machine.in(UP_STATES)) return;
    const how = exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`;
    const stderrTail = this.logs.stderr.tail(600).trim().split('\n').slice(-3).join(' | ');
    const words = this.runnerFailedMessage ?? stderrTail;
    // Before its hello, or after saying RunnerFailed while starting, a runner that exits
    // would do the same again (missing engine, bad arguments, model not found): no retry.
    const starting = this.machine.in(STARTUP_STATES);
    const beforeHello = starting && this.reportedFastSynch === null;
    if (starting && (beforeHello || this.runnerFailedMessage !== null) && exit.signal === null) {
      void this.goDown('startup_failed', `runner failed to start (${how})${words ? `: ${words}` : ''}`, exit);
      return;
    }
    void this.goDown('crashed', `runner crashed (${how})${words ? `: ${words}` : ''}`, exit);
  }

  /**
   * The one path for a runner that went away: fail everything in flight at once (clients
   * must never hang), make sure the process group is gone, then decide by cause:
   * a start-up failure that would repeat fails for good; a stuck runner that survived
   * SIGKILL or ran with fast synch on needs the operator; a crash (or a stuck runner
   * safely gone) restarts with backoff until the failure cap within the window.
   */
  private async goDown(cause: DownCause, message: string, exit: RunnerExit | null): Promise<void> {
    if (!this.machine.in(UP_STATES)) return;
    // Down before anything else: from here on no view says serving, however long the kill takes.
    this.machine.transition('down', message);
    this.lastDown = { cause, message };
    // Whatever the dying process still prints must not overwrite the failure.
    this.epoch += 1;
    this.watchdog.stop();
    this.abortLifecycle(message);
    this.failInFlight(cause, message);
    if (this.runnerStatus.kind !== 'RunnerFailed') this.setRunnerStatus({ kind: 'RunnerFailed', errorMessage: message });
    const proc = this.process;
    this.process = null;
    this.pid = null;
    let finalExit = exit;
    let died = true;
    if (proc?.alive) ({ exit: finalExit, died } = await proc.terminate());
    this.lastExit = exitSnapshot(cause, finalExit, message);

    const fastSynch = this.reportedFastSynch ?? this.options.expectedFastSynch();
    const decision = decideAfterDown({ cause, died, fastSynch }, () => this.failures.record(Date.now()), this.options.restart);
    this.attention = decision.attention;
    this.emit({ type: 'down', cause, message, exit: finalExit, willRestartInMs: decision.delay });
    // A stop during the kill has taken over (stopping or stopped): it decides, not the policy.
    if (this.machine.state !== 'down') return;
    if (decision.delay !== null) this.restartAt = Date.now() + decision.delay;
    this.machine.transition(decision.to, decision.attention ?? message);
    if (decision.delay === null) return;
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (this.machine.state !== 'restarting') return;
      this.restarts += 1;
      void this.launch(`restart after ${EXIT_CAUSES[cause]}`);
    }, decision.delay);
  }

  private failInFlight(cause: DownCause, message: string): void {
    const lost = this.ledger.clear();
    for (const taskId of lost) this.emit({ type: 'task_lost', taskId, cause, message });
  }
}

function exitSnapshot(cause: DownCause, exit: RunnerExit | null, message: string): RunnerExitSnapshot {
  return { cause: EXIT_CAUSES[cause], exitCode: exit?.code ?? null, signal: exit?.signal ?? null, at: Date.now(), message };
}
