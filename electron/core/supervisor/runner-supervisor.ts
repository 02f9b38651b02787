/**
 * RunnerSupervisor: owns one instance's runner process across restarts: its one
 * lifecycle (runner-state-machine.ts), its start flow, and what happens when it goes down.
 *
 * The rule this product exists for (exo's supervisor fix): nothing here ever makes a
 * caller wait for a generation task's acknowledgement. A runner busy with a long
 * prefill acknowledges only when its step ends; exo's worker awaited that ack inside
 * the one planning loop of the node and stalled every other model for ~15 s.
 * So generation tasks are recorded in the task ledger and written at once
 * (generation-tasks.ts, with the held→sent rule of cancels); lifecycle steps (hello,
 * load, warm-up) are awaited only inside this supervisor's own flow, each with a
 * deadline (lifecycle-tasks.ts). The processes are kept apart (runner-processes.ts),
 * and each line a runner writes is routed by runner-messages.ts.
 */
import { join } from 'node:path';
import { PACING_PROTOCOL_VERSION, type PrefillPacing, type RunnerStatus, type Task } from '../../../shared/runner-protocol';
import type { RunnerExitSnapshot, RunnerState } from '../../../shared/snapshot';
import { LogTail } from '../process/log-tail';
import { FailureWindow } from '../process/restart-policy';
import { LifecycleAbort, LifecycleFailure, LifecycleTasks } from './lifecycle-tasks';
import { EXIT_CAUSES, exitedOnItsOwn, exitSnapshot, fastSynchRefusal, protocolRefusal } from './runner-down-reasons';
import type { RunnerExit } from './runner-process';
import { RunnerProcesses } from './runner-processes';
import { routeRunnerMessage, type RunnerMessageTargets } from './runner-messages';
import { RunnerRates } from './runner-rates';
import { DEFAULT_FAILURE_WINDOW_MS, decideAfterDown, type DownCause } from './runner-restart-decision';
import { RunnerStateMachine, STARTUP_STATES, UP_STATES, type RunnerStateChange } from './runner-state-machine';
import { GenerationTasks } from './generation-tasks';
import type { SupervisorEvent } from './supervisor-events';
import type { SupervisorOptions } from './supervisor-options';
import type { InProgressTask, PendingCancel } from './task-ledger';
import { Watchdog, watchdogDeadlineMs, type WatchdogFiring, type WatchdogPhase, type WatchdogWork } from './watchdog';

type GenerationTask = Extract<Task, { kind: 'TextGeneration' }>;

export { WEDGED_GPU_ADVICE, type DownCause, type RestartPolicy } from './runner-restart-decision';
export type { SupervisorEvent } from './supervisor-events';
export type { SupervisorOptions } from './supervisor-options';
export type { InProgressTask, PendingCancel } from './task-ledger';

/** The message of the log record a refused runner transition writes. */
export const REFUSED_RUNNER_TRANSITION = 'refused runner transition';

export class RunnerSupervisor {
  /** The runner's own last status as it reported it (the supervisor adds its own at spawn, hello, failure and shutdown). */
  runnerStatus: RunnerStatus = { kind: 'RunnerIdle' };
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
  /** The generation tasks in progress and their pending cancels (generation-tasks.ts, over the task ledger). */
  private readonly tasks: GenerationTasks;
  readonly logs: { stdout: LogTail; stderr: LogTail };

  /** The current runner process and those not yet exited (runner-processes.ts). */
  private readonly processes: RunnerProcesses;
  /** When each recent crash or stuck happened (Date.now()), for the failure cap. */
  private readonly failures: FailureWindow;
  /** The runner's own words when it reported RunnerFailed. */
  private runnerFailedMessage: string | null = null;
  private restartTimer: NodeJS.Timeout | null = null;
  /** The hello, load and warm-up steps, awaited in the start flow only (lifecycle-tasks.ts). */
  private readonly lifecycle: LifecycleTasks;
  private readonly watchdog: Watchdog;
  /** This runner's measured speed, kept across restarts (same model, same Mac). */
  readonly rates: RunnerRates;
  /** Where the runner's lines go (runner-messages.ts). */
  private readonly messageTargets: RunnerMessageTargets;
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
    this.processes = new RunnerProcesses(options, this.logs);
    this.rates = new RunnerRates(options.rates);
    this.tasks = new GenerationTasks({ send: (message) => this.processes.send(message), emit }, this.rates);
    this.lifecycle = new LifecycleTasks({
      send: (task) => this.processes.send(task),
      ackTimeoutMs: options.ackTimeoutMs ?? 15_000,
      runnerFailedWords: () => this.runnerFailedMessage,
    });
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
    this.messageTargets = {
      lifecycle: this.lifecycle,
      tasks: this.tasks,
      watchdog: this.watchdog,
      emit: (event) => this.emit(event),
      runnerStatus: (status) => {
        if (status.kind === 'RunnerFailed') this.runnerFailedMessage = status.errorMessage;
        this.setRunnerStatus(status);
      },
      allTasksEnded: () => {
        if (this.machine.state === 'running') this.machine.transition('ready', 'no request in progress');
      },
    };
  }

  /** The current runner's pid; null while none runs (down, stopped, or not started). */
  get pid(): number | null {
    return this.processes.current?.pid ?? null;
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
    this.tasks.add(task);
    if (wasIdle) this.watchdog.workStartedWhileIdle();
    this.machine.transition('running', 'requests in progress');
    this.processes.send(task);
  }

  /**
   * Cancels a generation task. Unacknowledged: held and sent on the ack, because a
   * runner drops cancels for tasks it has not admitted (exo measured 0 of 2 stopped).
   * Acknowledged: sent at once, pending until the runner confirms.
   */
  cancel(taskId: string): boolean {
    return this.tasks.cancel(taskId);
  }

  /** The generation tasks in progress, by task id. */
  get inProgress(): ReadonlyMap<string, InProgressTask> {
    return this.tasks.inProgress;
  }

  /** The cancels pending (held until the ack, or sent), by task id. */
  get pendingCancels(): ReadonlyMap<string, PendingCancel> {
    return this.tasks.pendingCancels;
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
    if (!this.supportsPacing || !this.processes.current?.alive || !this.machine.in(UP_STATES)) return null;
    const pacingId = this.nextTaskId('pacing');
    this.processes.send({ kind: 'SetPrefillPacing', pacingId, ...pacing });
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
    const proc = this.processes.current;
    this.lifecycle.abort('the runner is stopping');
    this.tasks.loseAll(cause, message);
    if (proc?.alive) {
      this.setRunnerStatus({ kind: 'RunnerShuttingDown' });
      proc.send({ kind: 'Shutdown', taskId: this.nextTaskId('shutdown') });
      const exit = (await proc.waitForExit(this.options.shutdownGraceMs ?? 3000)) ?? (await proc.terminate()).exit;
      this.lastExit = exitSnapshot(cause, exit, message);
    }
    this.processes.release();
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
    return this.processes.livePids();
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
    this.lifecycle.reset();
    this.restartAt = null;
    this.lastDown = null;
    this.machine.transition('starting', reason);
    this.setRunnerStatus({ kind: 'RunnerConnecting' });
    const proc = this.processes.spawn(this.options.spawnSpec(), {
      onMessage: (message) => epoch === this.epoch && routeRunnerMessage(message, this.messageTargets),
      onMalformedLine: (reason, line) => {
        if (epoch !== this.epoch) return;
        this.watchdog.outputSeen();
        this.malformedLines += 1;
        this.logs.stderr.append(`[exobar] malformed runner line (${reason}): ${line.slice(0, 200)}\n`);
        this.emit({ type: 'malformed_line', reason });
      },
      onExit: (exit) => {
        if (epoch === this.epoch) this.onExit(exit);
      },
    });
    this.emit({ type: 'spawned', pid: proc.pid });
    this.watchdog.start();
    try {
      const hello = await this.lifecycle.waitForHello(this.options.helloTimeoutMs ?? 15_000);
      const unspoken = protocolRefusal(hello.protocolVersion);
      if (unspoken) return await this.goDown(unspoken.cause, unspoken.message, null);
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
      const mismatch = fastSynchRefusal(this.options.expectedFastSynch(), hello.fastSynch);
      if (mismatch) return await this.goDown(mismatch.cause, mismatch.message, null);
      this.setRunnerStatus({ kind: 'RunnerConnected' });
      this.machine.transition('loading', 'the runner said hello');
      await this.lifecycle.run({ kind: 'LoadModel', taskId: this.nextTaskId('load') });
      this.machine.transition('warming_up', 'the model is loaded');
      await this.lifecycle.run({ kind: 'StartWarmup', taskId: this.nextTaskId('warmup') });
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

  private setRunnerStatus(status: RunnerStatus): void {
    this.runnerStatus = status;
    this.emit({ type: 'runner_status', status });
  }

  /** What the runner is working on, for the watchdog; null when it is idle (silence is normal then). */
  private currentWork(): WatchdogWork | null {
    if (!this.machine.in(UP_STATES)) return null;
    if (this.machine.in(STARTUP_STATES) || this.lifecycle.open) return { phase: 'lifecycle' };
    return this.tasks.currentWork();
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
    const starting = this.machine.in(STARTUP_STATES);
    const { cause, message } = exitedOnItsOwn(exit, {
      starting,
      beforeHello: starting && this.reportedFastSynch === null,
      runnerFailedWords: this.runnerFailedMessage,
      stderrTail: this.logs.stderr.tail(600).trim().split('\n').slice(-3).join(' | '),
    });
    void this.goDown(cause, message, exit);
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
    this.lifecycle.abort(message);
    this.tasks.loseAll(cause, message);
    if (this.runnerStatus.kind !== 'RunnerFailed') this.setRunnerStatus({ kind: 'RunnerFailed', errorMessage: message });
    const proc = this.processes.current;
    this.processes.release();
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
}
