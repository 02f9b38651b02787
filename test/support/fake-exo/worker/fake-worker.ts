/**
 * The fake exo's workers: one plan loop per Mac that hands each generation task to
 * its runner, the way exo 0.3.70's worker does, and the cluster bookkeeping of those
 * tasks (Pending → Running on the first pick-up, deleted when the stream ends,
 * Cancelled plus a CancelTask on cancel).
 *
 * `blocking` (stock exo): the plan loop awaits each runner's acknowledgement before
 * planning anything else on that Mac, so one request queued behind a long prefill
 * stalls every other model there. `fixed` (exo PR 2348): it hands the task over and
 * goes on; a cancel for a task not yet acknowledged is held until the ack.
 */
import type { FakeExoCluster, FakeInstance } from '../fake-cluster';
import { timingOf } from './fake-timings';
import { FakeRunner, type GenerationSink } from './fake-runner';
import { sleep } from '../../eventually';

export type WorkerMode = 'blocking' | 'fixed';

export interface FakeExoWorkerOptions {
  mode?: WorkerMode;
  /** Multiplies every runner duration (default 1: the measured timings). */
  timeScale?: number;
  /**
   * True (the default, as exo 0.3.70 behaves): a cancel marks the task Cancelled and
   * deletes it about 10 ms later, with no CancelTask, before the runner hears of it, so
   * a runner that has the request goes on generating it for nobody (RunnerRunning with
   * no task) until its max_tokens (test/fixtures/exo/real/state-after-cancel-ghost.json).
   * False: the cancel reaches the runner, which stops at its next check, and a
   * CancelTask completes a step later.
   */
  ghostCancels?: boolean;
  /**
   * Which ghost cancels leave their task behind as `Cancelled` for good, as real exo
   * sometimes does (10 of 20 cancels in one run, still listed minutes later, while the
   * runner went on generating): `alternate` (the default) keeps the 2nd, 4th, ... one,
   * `none` deletes every one about 10 ms after it turned Cancelled, `all` keeps each.
   */
  staleCancelledTasks?: 'alternate' | 'none' | 'all';
}

export interface GenerateRequest {
  model: string;
  promptTokens: number;
  maxTokens: number;
  /** The node whose API opened the stream: only it can cancel the command. */
  apiNodeId: string;
  sink: GenerationSink;
}

interface Dispatch {
  commandId: string;
  runner: FakeRunner;
  run: () => Promise<void>;
  /** The runner is gone (failed, or its instance deleted): the task can never run. */
  fail: (message: string) => void;
}

interface OpenCommand {
  taskId: string;
  sink: GenerationSink;
  apiNodeId: string;
  runner: FakeRunner;
  ended: boolean;
}

/** The runner statuses exo's worker hands tasks to: exo's serving rule, kept here apart from exobar's own (SERVING_STATUSES). */
const SERVING_TAGS = new Set(['RunnerReady', 'RunnerRunning']);

export class FakeExoWorker {
  mode: WorkerMode;
  timeScale: number;
  ghostCancels: boolean;
  staleCancelledTasks: 'alternate' | 'none' | 'all';
  private ghostCancelCount = 0;
  private readonly runners = new Map<string, FakeRunner>();
  private readonly planQueues = new Map<string, Dispatch[]>();
  private readonly planning = new Set<string>();
  private readonly commands = new Map<string, OpenCommand>();
  /** Models whose prefills wait at their next chunk boundary, until released. */
  private readonly prefillHolds = new Map<string, { promise: Promise<void>; release: () => void }>();

  constructor(
    readonly cluster: FakeExoCluster,
    options: FakeExoWorkerOptions = {},
  ) {
    this.mode = options.mode ?? 'blocking';
    this.timeScale = options.timeScale ?? 1;
    this.ghostCancels = options.ghostCancels ?? true;
    this.staleCancelledTasks = options.staleCancelledTasks ?? 'alternate';
  }

  /**
   * The API node's part of a chat completion: a TextGeneration task Pending on the
   * model's least busy instance, planned on its rank-0 Mac. Null when no instance of
   * the model exists (exo answers 404).
   */
  generate(request: GenerateRequest): { commandId: string; taskId: string } | null {
    if (this.cluster.instancesOf(request.model).length === 0) return null;
    const taskId = this.cluster.submit(request.model, '(prompt redacted by the fake exo)');
    const task = this.cluster.task(taskId);
    const commandId = String(task.body.commandId);
    const instance = this.cluster.instances.get(String(task.body.instanceId))!;
    const runner = this.runnerOf(instance);
    const command: OpenCommand = { taskId, sink: request.sink, apiNodeId: request.apiNodeId, runner, ended: false };
    this.commands.set(commandId, command);
    const sink: GenerationSink = {
      admitted: () => {
        const status = this.cluster.runners.get(runner.runnerId);
        // Only the first task a Ready runner picks up becomes Running (runner.py:233-234);
        // the runner reports itself running even for a task exo deleted meanwhile (a ghost).
        if (status && 'RunnerReady' in status) {
          if (this.cluster.tasks.has(taskId)) this.cluster.task(taskId).body.taskStatus = 'Running';
          this.setRunnerStatus(instance, 'RunnerRunning');
        }
        if (!command.ended) request.sink.admitted();
      },
      progress: (p, t) => !command.ended && request.sink.progress(p, t),
      token: (i, text, finish) => !command.ended && request.sink.token(i, text, finish),
      // After a cancel the stream has ended already; the runner's own end only tidies up.
      finished: (reason, stats) => {
        const ended = command.ended;
        this.end(commandId);
        if (!ended) request.sink.finished(reason, stats);
      },
      failed: (message) => {
        const ended = command.ended;
        this.end(commandId);
        if (!ended) request.sink.failed(message);
      },
    };
    const params = task.body.taskParams as Record<string, unknown>;
    params.max_output_tokens = request.maxTokens;
    this.plan({
      commandId,
      runner,
      run: () => runner.send({ commandId, promptTokens: request.promptTokens, maxTokens: request.maxTokens, sink }),
      fail: (message) => sink.failed(message),
    });
    return { commandId, taskId };
  }

  /**
   * `POST /v1/cancel/{id}` on `apiNodeId`: false (exo's 404) unless that node's API
   * opened the stream and it is still open. The task turns Cancelled with a CancelTask;
   * the runner stops at its next check if it had admitted the task.
   */
  cancel(commandId: string, apiNodeId: string): boolean {
    const command = this.commands.get(commandId);
    if (!command || command.ended || command.apiNodeId !== apiNodeId) return false;
    command.ended = true;
    if (this.ghostCancels) {
      this.ghostCancel(commandId, command);
      return true;
    }
    if (this.cluster.tasks.has(command.taskId)) {
      const cancelTaskId = this.cluster.cancel(command.taskId);
      // The CancelTask completes within about 0.5 s; the cancelled task is then deleted.
      setTimeout(() => {
        const cancelTask = this.cluster.tasks.get(cancelTaskId);
        if (cancelTask) cancelTask.body.taskStatus = 'Complete';
        this.cluster.tasks.delete(command.taskId);
        this.cluster.event();
      }, 50 * this.timeScale).unref();
    }
    command.runner.cancel(commandId, this.mode === 'fixed');
    command.sink.finished('cancelled', { promptS: 0, decodeS: 0 });
    return true;
  }

  /**
   * exo 0.3.70's cancel: TaskCancelled, then TaskFinished about 10 ms later deletes the
   * task (or, for a stale one, never does), before the worker tells the runner. A task still waiting for the worker's
   * plan is never handed over; one the runner has runs on to its end for nobody.
   */
  private ghostCancel(commandId: string, command: OpenCommand): void {
    const task = this.cluster.tasks.get(command.taskId);
    if (task) {
      task.body.taskStatus = 'Cancelled';
      this.cluster.event();
      this.ghostCancelCount += 1;
      const stale = this.staleCancelledTasks === 'all' || (this.staleCancelledTasks === 'alternate' && this.ghostCancelCount % 2 === 0);
      // A stale one stays Cancelled in the state for good; the runner runs on all the same.
      if (!stale) {
        setTimeout(() => {
          this.cluster.tasks.delete(command.taskId);
          this.cluster.event();
        }, 10).unref();
      }
    }
    const queue = this.planQueues.get(command.runner.nodeId);
    const planned = queue?.findIndex((d) => d.commandId === commandId) ?? -1;
    if (queue && planned >= 0) {
      queue.splice(planned, 1);
      this.commands.delete(commandId);
    }
    command.sink.finished('cancelled', { promptS: 0, decodeS: 0 });
  }

  /** The runner of the model's instance on `nodeName` dies with `message`. */
  failRunner(model: string, nodeName: string, message = 'Runner shutdown before completing command (signal=6 (Abort trap: 6))'): void {
    const runnerId = this.cluster.failRunner(model, nodeName, { errorMessage: message });
    this.runners.get(runnerId)?.fail(message);
  }

  /**
   * Holds every prefill of `model` after its first chunk until the returned release is
   * called: a prefill as long as the test needs, so it can look at what happens during
   * one without racing the clock.
   */
  holdPrefills(model: string): () => void {
    const existing = this.prefillHolds.get(model);
    if (existing) return existing.release;
    let release!: () => void;
    const promise = new Promise<void>((resolve) => (release = resolve));
    const hold = {
      promise,
      release: () => {
        if (this.prefillHolds.get(model) === hold) this.prefillHolds.delete(model);
        release();
      },
    };
    this.prefillHolds.set(model, hold);
    return hold.release;
  }

  /** Commands whose stream is open, with the node whose API opened each. */
  openCommands(): Array<{ commandId: string; apiNodeId: string }> {
    return [...this.commands.entries()].filter(([, c]) => !c.ended).map(([commandId, c]) => ({ commandId, apiNodeId: c.apiNodeId }));
  }

  private end(commandId: string): void {
    const command = this.commands.get(commandId);
    if (!command) return;
    this.commands.delete(commandId);
    if (!command.ended) {
      command.ended = true;
      // TaskFinished → TaskDeleted: the task leaves the state when its stream ends.
      this.cluster.tasks.delete(command.taskId);
      this.cluster.event();
    }
    for (const instance of this.cluster.instances.values()) {
      if (instance.shards[0]?.runnerId === command.runner.runnerId && command.runner.idle) this.setRunnerStatus(instance, 'RunnerReady');
    }
  }

  private runnerOf(instance: FakeInstance): FakeRunner {
    const shard = instance.shards[0]!;
    let runner = this.runners.get(shard.runnerId);
    if (!runner) {
      runner = new FakeRunner(shard.runnerId, shard.nodeId, timingOf(instance.modelId), {
        timeScale: this.timeScale,
        othersBusy: () => [...this.runners.values()].some((r) => r !== runner && r.nodeId === shard.nodeId && r.computing),
        onBusy: () => undefined,
        prefillGate: () => this.prefillHolds.get(instance.modelId)?.promise ?? Promise.resolve(),
      });
      this.runners.set(shard.runnerId, runner);
    }
    return runner;
  }

  private setRunnerStatus(instance: FakeInstance, tag: 'RunnerReady' | 'RunnerRunning'): void {
    for (const shard of instance.shards) {
      const status = this.cluster.runners.get(shard.runnerId);
      if (!status || !SERVING_TAGS.has(Object.keys(status)[0] ?? '')) continue;
      this.cluster.runners.set(shard.runnerId, tag === 'RunnerReady' ? { RunnerReady: { prefillServerPort: null } } : { RunnerRunning: {} });
    }
    this.cluster.event();
  }

  /**
   * The runner failed or its instance was deleted: its tasks fail. A runner that only
   * vanished from the runner list while its instance stays (exo #2120) is not gone to
   * exo's worker: the task waits for it, with no error, as real exo leaves it.
   */
  private runnerGone(runner: FakeRunner): boolean {
    const status = this.cluster.runners.get(runner.runnerId);
    const placed = [...this.cluster.instances.values()].some((i) => i.shards.some((s) => s.runnerId === runner.runnerId));
    return !placed || (status !== undefined && 'RunnerFailed' in status);
  }

  /** Queues a hand-over on the runner's Mac and runs that Mac's plan loop. */
  private plan(dispatch: Dispatch): void {
    const nodeId = dispatch.runner.nodeId;
    const queue = this.planQueues.get(nodeId) ?? [];
    this.planQueues.set(nodeId, queue);
    queue.push(dispatch);
    void this.planLoop(nodeId);
  }

  /**
   * One plan loop per Mac. Tasks whose runner is not ready yet wait (exo plans only for
   * ready runners); the rest go in order. Blocking: each hand-over is awaited until the
   * runner acknowledges, and nothing else on the Mac is planned meanwhile.
   */
  private async planLoop(nodeId: string): Promise<void> {
    if (this.planning.has(nodeId)) return;
    this.planning.add(nodeId);
    try {
      const queue = this.planQueues.get(nodeId)!;
      while (queue.length > 0) {
        for (const gone of queue.filter((d) => this.runnerGone(d.runner))) {
          queue.splice(queue.indexOf(gone), 1);
          gone.fail(`Runner ${gone.runner.runnerId} is gone (failed or its instance deleted)`);
        }
        const index = queue.findIndex((d) => SERVING_TAGS.has(Object.keys(this.cluster.runners.get(d.runner.runnerId) ?? {})[0] ?? ''));
        if (index < 0) {
          await sleep(10);
          continue;
        }
        const [dispatch] = queue.splice(index, 1);
        if (this.mode === 'blocking') await dispatch!.run();
        else void dispatch!.run();
      }
    } finally {
      this.planning.delete(nodeId);
    }
  }
}
