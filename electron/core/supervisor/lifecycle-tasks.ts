/**
 * The runner's lifecycle steps (its hello, LoadModel, StartWarmup): the only tasks the
 * supervisor awaits, inside its own start flow, each with a deadline. Generation tasks
 * are never awaited (task-ledger.ts); that is the rule this product exists for.
 *
 * A runner answers a lifecycle task like any other (ack, status, error chunks under the
 * task id), so each answer is offered here first and goes to the ledger only when no
 * lifecycle step is waiting for it.
 */
import type { RunnerOutput, Task, TaskStatus } from '../../../shared/runner-protocol';

type GenerationTask = Extract<Task, { kind: 'TextGeneration' }>;
export type LifecycleTask = Exclude<Task, GenerationTask>;
export type HelloMessage = Extract<RunnerOutput, { type: 'Hello' }>;

/** A lifecycle step that failed; `repeats` when trying again would fail the same way (the runner said why). */
export class LifecycleFailure extends Error {
  constructor(
    message: string,
    readonly repeats: boolean,
  ) {
    super(message);
  }
}

/** The start flow was called off (the runner went down or is stopping): nothing to report. */
export class LifecycleAbort extends Error {}

interface Waiter {
  ack: () => void;
  done: (status: TaskStatus) => void;
  fail: (e: Error) => void;
}

export interface LifecycleTasksOptions {
  /** Writes a task to the current runner (none when there is no process). */
  send: (task: LifecycleTask) => void;
  ackTimeoutMs: number;
  /** The runner's own words when it reported RunnerFailed: why a step ended otherwise than Complete. */
  runnerFailedWords: () => string | null;
}

export class LifecycleTasks {
  private readonly waiters = new Map<string, Waiter>();
  private helloWaiter: ((hello: HelloMessage) => void) | null = null;
  /** Error chunks of lifecycle tasks (a runner sends them under the task id). */
  private readonly errors = new Map<string, string>();
  private taskOpen = false;

  constructor(private readonly options: LifecycleTasksOptions) {}

  /** True while a lifecycle task is out (the watchdog then allows a lifecycle step's silence). */
  get open(): boolean {
    return this.taskOpen;
  }

  /** A new process starts: the error words of the last one are forgotten. */
  reset(): void {
    this.errors.clear();
  }

  waitForHello(timeoutMs: number): Promise<HelloMessage> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => settle(new Error(`no hello within ${timeoutMs} ms`)), timeoutMs);
      const settle = (result: HelloMessage | Error) => {
        clearTimeout(timer);
        this.helloWaiter = null;
        this.waiters.delete('hello');
        if (result instanceof Error) reject(result);
        else resolve(result);
      };
      this.helloWaiter = settle;
      this.waiters.set('hello', { ack: () => undefined, done: () => undefined, fail: settle });
    });
  }

  /** Sends a lifecycle task and waits for its ack (deadline) and its completion (the watchdog watches that). */
  run(task: LifecycleTask): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const ackTimeout = this.options.ackTimeoutMs;
      const timer = setTimeout(() => fail(new LifecycleFailure(`${task.kind} was not acknowledged within ${ackTimeout} ms`, false)), ackTimeout);
      const fail = (e: Error) => {
        clearTimeout(timer);
        this.waiters.delete(task.taskId);
        this.taskOpen = false;
        reject(e);
      };
      this.waiters.set(task.taskId, {
        ack: () => clearTimeout(timer),
        done: (status) => {
          clearTimeout(timer);
          this.waiters.delete(task.taskId);
          this.taskOpen = false;
          if (status === 'Complete') resolve();
          else {
            const words = this.errors.get(task.taskId) ?? this.options.runnerFailedWords();
            reject(new LifecycleFailure(words ?? `${task.kind} ended ${status}`, words !== null));
          }
        },
        fail,
      });
      this.taskOpen = true;
      this.options.send(task);
    });
  }

  /** Fails every step waiting, with {@link LifecycleAbort}. */
  abort(message: string): void {
    for (const waiter of [...this.waiters.values()]) waiter.fail(new LifecycleAbort(message));
    this.waiters.clear();
    this.taskOpen = false;
  }

  hello(message: HelloMessage): void {
    this.helloWaiter?.(message);
  }

  /** The runner acknowledged `taskId`: true when it was a lifecycle task. */
  acknowledged(taskId: string): boolean {
    const waiter = this.waiters.get(taskId);
    waiter?.ack();
    return waiter !== undefined;
  }

  /** The runner's status for `taskId`: true when it was a lifecycle task (a final status ends its wait). */
  statusUpdated(taskId: string, status: TaskStatus): boolean {
    const waiter = this.waiters.get(taskId);
    if (!waiter) return false;
    if (status !== 'Running' && status !== 'Pending') waiter.done(status);
    return true;
  }

  /** An error chunk under `commandId`: kept as the step's words when a lifecycle step waits under that id. */
  errorChunk(commandId: string, errorMessage: string): boolean {
    if (!this.waiters.has(commandId)) return false;
    this.errors.set(commandId, errorMessage);
    return true;
  }
}
