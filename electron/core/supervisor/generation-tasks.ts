/**
 * The generation side of the runner's conversation: records each task in the ledger,
 * writes cancels when the ledger's held→sent rule says so, hands the runner's answers
 * for the tasks on as events, and feeds their chunks to the learned rates. Nothing here
 * waits for the runner (exo's fix for the stalled worker).
 */
import type { Chunk, RunnerInput, Task, TaskStatus } from '../../../shared/runner-protocol';
import { countPromptTokens } from '../../../shared/token-count';
import type { DownCause } from './runner-restart-decision';
import type { RunnerRates } from './runner-rates';
import { RunnerWork } from './runner-work';
import type { SupervisorEvent } from './supervisor-events';
import { TaskLedger, type InProgressTask, type PendingCancel } from './task-ledger';
import type { WatchdogWork } from './watchdog';

type GenerationTask = Extract<Task, { kind: 'TextGeneration' }>;

export interface GenerationTasksIo {
  /** Writes to the current runner (nothing when there is none). */
  send(message: RunnerInput): void;
  emit(event: SupervisorEvent): void;
}

export class GenerationTasks {
  private readonly ledger = new TaskLedger();
  private readonly work: RunnerWork;

  constructor(
    private readonly io: GenerationTasksIo,
    rates: RunnerRates,
  ) {
    this.work = new RunnerWork(this.ledger, rates);
  }

  /** The tasks in progress, by task id. */
  get inProgress(): ReadonlyMap<string, InProgressTask> {
    return this.ledger.inProgress;
  }

  /** The cancels pending (held until the ack, or sent), by task id. */
  get pendingCancels(): ReadonlyMap<string, PendingCancel> {
    return this.ledger.pendingCancels;
  }

  /** The generation work for the watchdog; null when no task is in progress. */
  currentWork(): WatchdogWork | null {
    return this.work.current();
  }

  /** Records `task` as in progress (the supervisor writes it to the runner). */
  add(task: GenerationTask): void {
    this.ledger.add(task, countPromptTokens(task.params.messages));
  }

  /** A cancel for `taskId`: held until the ack, or written now. False for a task not in progress. */
  cancel(taskId: string): boolean {
    const step = this.ledger.cancel(taskId);
    if (step === 'held') this.io.emit({ type: 'cancel_held', taskId });
    else if (step === 'send') this.sendCancel(taskId);
    return step !== 'unknown';
  }

  acknowledged(taskId: string): void {
    const acked = this.ledger.acknowledged(taskId);
    if (!acked) return;
    this.io.emit({ type: 'ack', taskId });
    // A cancel held while the runner could not know the task goes out now.
    if (acked.sendHeldCancel) this.sendCancel(taskId);
  }

  /** The runner's status for `taskId`: true when it ended a task in progress. */
  statusUpdated(taskId: string, status: TaskStatus): boolean {
    if (!this.ledger.inProgress.has(taskId)) return false;
    if (status === 'Running' || status === 'Pending') return false;
    this.ledger.ended(taskId);
    this.io.emit({ type: 'task_status', taskId, status });
    return true;
  }

  /** A chunk under `commandId`, `sinceLastLineMs` after the runner's previous line. */
  chunk(commandId: string, chunk: Chunk, sinceLastLineMs: number, now: number): void {
    const entry = this.ledger.byCommandId(commandId);
    if (!entry) return;
    this.work.learn(entry, chunk, sinceLastLineMs, now);
    if (chunk.kind === 'TokenChunk') entry.tokens += 1;
    this.io.emit({ type: 'chunk', taskId: entry.task.taskId, chunk });
  }

  /** The runner went down or was stopped: every task in progress is lost with `cause` (clients must never hang). */
  loseAll(cause: DownCause, message: string): void {
    for (const taskId of this.ledger.clear()) this.io.emit({ type: 'task_lost', taskId, cause, message });
  }

  private sendCancel(taskId: string): void {
    this.ledger.cancelSent(taskId);
    this.io.send({ kind: 'CancelTask', cancelledTaskId: taskId });
    this.io.emit({ type: 'cancel_sent', taskId });
  }
}
