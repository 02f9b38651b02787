/**
 * The runner's stdin, buffered. Node reads lines as they arrive, but the engine only
 * *acts* on them at the points exo's runner does: between generation steps (admission,
 * at most one task per step) and at cancel checks. Bad lines are logged and ignored,
 * never fatal.
 */
import { z } from 'zod';
import { RunnerInputSchema, type CancelTask, type RunnerInput, type SetPrefillPacing, type Task } from '../../../shared/runner-protocol';
import type { Logger } from './logger';

export class Inbox {
  private readonly queue: RunnerInput[] = [];
  private wake: (() => void) | null = null;

  constructor(private readonly log: Logger) {}

  /** Parses and queues one stdin line; a malformed one is logged on stderr and dropped. */
  pushLine(line: string): void {
    if (line.trim() === '') return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      this.log.warn({ line: line.slice(0, 200) }, 'ignored a stdin line that is not JSON');
      return;
    }
    const parsed = RunnerInputSchema.safeParse(json);
    if (!parsed.success) {
      this.log.warn({ line: line.slice(0, 200), reason: z.prettifyError(parsed.error) }, 'ignored an invalid stdin message');
      return;
    }
    this.queue.push(parsed.data);
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  /** The next message in arrival order, waiting for one if the inbox is empty. */
  async next(): Promise<RunnerInput> {
    for (;;) {
      const message = this.queue.shift();
      if (message) return message;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  /** The first queued task (not a cancel, not a pacing), removed from the inbox. */
  takeNextTask(): Task | undefined {
    const index = this.queue.findIndex(isTask);
    if (index < 0) return undefined;
    return this.queue.splice(index, 1)[0] as Task;
  }

  hasTask(): boolean {
    return this.queue.some(isTask);
  }

  /** Every SetPrefillPacing that has arrived, in order, removed. */
  takePacings(): SetPrefillPacing[] {
    return this.takeAll((m): m is SetPrefillPacing => m.kind === 'SetPrefillPacing');
  }

  /** A queued Shutdown, removed: it overtakes generation tasks still waiting for admission. */
  takeShutdown(): Task | undefined {
    const index = this.queue.findIndex((m) => m.kind === 'Shutdown');
    if (index < 0) return undefined;
    return this.queue.splice(index, 1)[0] as Task;
  }

  /** The cancels that target one of `taskIds`, removed; the others stay for the next cancel check. */
  takeCancelsFor(taskIds: ReadonlySet<string>): CancelTask[] {
    return this.takeAll((m): m is CancelTask => m.kind === 'CancelTask' && taskIds.has(m.cancelledTaskId));
  }

  /** Every cancel that has arrived so far, removed (a cancel check reads them all). */
  drainCancels(): CancelTask[] {
    return this.takeAll((m): m is CancelTask => m.kind === 'CancelTask');
  }

  /** Every queued message `matches` accepts, in arrival order, removed; the others stay. */
  private takeAll<M extends RunnerInput>(matches: (message: RunnerInput) => message is M): M[] {
    const taken: M[] = [];
    for (let i = 0; i < this.queue.length;) {
      const message = this.queue[i]!;
      if (matches(message)) {
        taken.push(message);
        this.queue.splice(i, 1);
      } else i++;
    }
    return taken;
  }
}

function isTask(message: RunnerInput): message is Task {
  return message.kind !== 'CancelTask' && message.kind !== 'SetPrefillPacing';
}
