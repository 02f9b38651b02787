/**
 * The generation tasks one runner has in hand, apart from the process handling: each task
 * in progress (sent, acknowledged, its tokens and prefill) and each cancel pending for one.
 *
 * The held→sent rule lives here: a runner drops a cancel for a task it has not
 * acknowledged (exo measured 0 of 2 stopped), so a cancel asked before the ack is held,
 * and goes out (sent) at the ack; a cancel for an acknowledged task goes out at once.
 * The supervisor does the writing to the process; the ledger says when.
 */
import type { PendingCancelState } from '../../../shared/instance-vocabulary';
import type { Task } from '../../../shared/runner-protocol';

type GenerationTask = Extract<Task, { kind: 'TextGeneration' }>;

export interface InProgressTask {
  task: GenerationTask;
  sentAt: number;
  acknowledgedAt: number | null;
  tokens: number;
  /** Prompt tokens as the node counts them (the runner's tokenizer may differ a little). */
  promptTokens: number;
  /** Prompt tokens the runner reported prefilled. */
  processed: number;
  lastTokenAt: number | null;
}

export interface PendingCancel {
  taskId: string;
  state: PendingCancelState;
  since: number;
}

/** What a cancel asks of the supervisor: nothing (unknown task, or a cancel already pending), hold it, or send it now. */
export type CancelStep = 'unknown' | 'pending' | 'held' | 'send';

export class TaskLedger {
  private readonly tasks = new Map<string, InProgressTask>();
  private readonly cancels = new Map<string, PendingCancel>();

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** The tasks in progress, by task id. */
  get inProgress(): ReadonlyMap<string, InProgressTask> {
    return this.tasks;
  }

  /** The cancels pending, by task id. */
  get pendingCancels(): ReadonlyMap<string, PendingCancel> {
    return this.cancels;
  }

  /** Records a task written to the runner. */
  add(task: GenerationTask, promptTokens: number): InProgressTask {
    const entry: InProgressTask = { task, sentAt: this.now(), acknowledgedAt: null, tokens: 0, promptTokens, processed: 0, lastTokenAt: null };
    this.tasks.set(task.taskId, entry);
    return entry;
  }

  /** A cancel asked for `taskId`: held until the ack when the runner has not acknowledged the task, else to be sent now. */
  cancel(taskId: string): CancelStep {
    const entry = this.tasks.get(taskId);
    if (!entry) return 'unknown';
    if (this.cancels.has(taskId)) return 'pending';
    if (entry.acknowledgedAt !== null) return 'send';
    this.cancels.set(taskId, { taskId, state: 'held', since: this.now() });
    return 'held';
  }

  /** The cancel for `taskId` is written to the runner now, pending until the task ends. */
  cancelSent(taskId: string): void {
    this.cancels.set(taskId, { taskId, state: 'sent', since: this.now() });
  }

  /**
   * The runner acknowledged `taskId`: null when it is not a task in progress or was
   * acknowledged already; else whether a held cancel must go out now.
   */
  acknowledged(taskId: string): { sendHeldCancel: boolean } | null {
    const entry = this.tasks.get(taskId);
    if (!entry || entry.acknowledgedAt !== null) return null;
    entry.acknowledgedAt = this.now();
    return { sendHeldCancel: this.cancels.get(taskId)?.state === 'held' };
  }

  /** The task ended (the runner's final status): it and its cancel leave the ledger; false when it was not in progress. */
  ended(taskId: string): boolean {
    if (!this.tasks.delete(taskId)) return false;
    this.cancels.delete(taskId);
    return true;
  }

  /** The task in progress with this command id. */
  byCommandId(commandId: string): InProgressTask | undefined {
    for (const entry of this.tasks.values()) if (entry.task.commandId === commandId) return entry;
    return undefined;
  }

  /** Tasks past their prefill (a token out): the batch decoding together. */
  decoding(): number {
    let n = 0;
    for (const entry of this.tasks.values()) if (entry.tokens > 0) n += 1;
    return n;
  }

  /** The runner went down: every task is lost, every cancel with it; returns the lost task ids. */
  clear(): string[] {
    const lost = [...this.tasks.keys()];
    this.tasks.clear();
    this.cancels.clear();
    return lost;
  }
}
