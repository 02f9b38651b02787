/**
 * One fake exo runner: a model on one Mac that generates the way exo's runner does
 * (exo 0.3.70, src/exo/worker/runner/runner.py, per docs/exo-proxy.md):
 *
 * - it reads new tasks only **between** generation steps and admits, and
 *   acknowledges, at most one per step;
 * - the step that admits a task holds that task's **whole prefill**, in 4096-token
 *   chunks with a progress event after each; its first token ends the step;
 * - a cancel is checked at chunk boundaries and every decode step; a cancel for a
 *   task it has not admitted is dropped (it runs to completion anyway) unless the
 *   worker holds it until the acknowledgement (exo PR 2348).
 */
import { PREFILL_CHUNK_TOKENS, SHARED_GPU_FACTOR, type FakeModelTiming } from './fake-timings';
import { sleep } from '../../eventually';

export type FinishReason = 'stop' | 'length';

/** What a generation reports, in order: admitted, progress…, token…, then finished or failed. */
export interface GenerationSink {
  admitted(): void;
  progress(processed: number, total: number): void;
  token(index: number, text: string, finish: FinishReason | null): void;
  finished(reason: FinishReason | 'cancelled', stats: { promptS: number; decodeS: number }): void;
  failed(message: string): void;
}

export interface RunnerTask {
  commandId: string;
  promptTokens: number;
  maxTokens: number;
  sink: GenerationSink;
}

/** What the runner needs from its Mac. */
export interface RunnerEnv {
  /** Multiplies every duration (tests run faster than real time). */
  timeScale: number;
  /** True while another runner on the same Mac is in a step (the GPU is shared). */
  othersBusy(): boolean;
  /** The batch went from empty to busy (true) or back (false). */
  onBusy(busy: boolean): void;
  /**
   * Settles when the next prefill chunk may run: a test holds a prefill open for as long
   * as it needs (a prompt as long as it likes) instead of racing a fixed duration.
   */
  prefillGate(): Promise<void>;
}

interface Active {
  task: RunnerTask;
  generated: number;
  prefilled: boolean;
  cancelled: boolean;
  startedAt: number;
  prefilledAt: number;
}

export class FakeRunner {
  /** True while a step runs (prefill chunk or decode step). */
  computing = false;
  private readonly inbox: Array<{ task: RunnerTask; ack: () => void }> = [];
  private readonly batch: Active[] = [];
  /** Cancels held until the task is acknowledged (the fixed worker). */
  private readonly heldCancels = new Set<string>();
  private looping = false;
  private failure: string | null = null;

  constructor(
    readonly runnerId: string,
    readonly nodeId: string,
    private readonly timing: FakeModelTiming,
    private readonly env: RunnerEnv,
  ) {}

  /** Sends a task down the runner's pipe; resolves when the runner acknowledges it (between steps). */
  send(task: RunnerTask): Promise<void> {
    if (this.failure) {
      task.sink.failed(this.failure);
      return Promise.resolve();
    }
    return new Promise((ack) => {
      this.inbox.push({ task, ack });
      if (!this.looping) void this.loop();
    });
  }

  /** True when the runner knows the task (admitted), so it stops at the next check. */
  cancel(commandId: string, holdUntilAck: boolean): boolean {
    const active = this.batch.find((a) => a.task.commandId === commandId);
    if (active) {
      active.cancelled = true;
      return true;
    }
    if (holdUntilAck && this.inbox.some((i) => i.task.commandId === commandId)) this.heldCancels.add(commandId);
    return false;
  }

  /** The runner dies: everything it holds fails with exo's message. */
  fail(message: string): void {
    this.failure = message;
    for (const { task, ack } of this.inbox.splice(0)) {
      ack();
      task.sink.failed(message);
    }
    for (const active of this.batch.splice(0)) active.task.sink.failed(message);
  }

  get idle(): boolean {
    return this.inbox.length === 0 && this.batch.length === 0;
  }

  private async loop(): Promise<void> {
    this.looping = true;
    this.env.onBusy(true);
    try {
      while (!this.failure && (this.inbox.length > 0 || this.batch.length > 0)) {
        const next = this.inbox.shift();
        if (next) {
          const active: Active = { task: next.task, generated: 0, prefilled: false, cancelled: false, startedAt: performance.now(), prefilledAt: 0 };
          if (this.heldCancels.delete(next.task.commandId)) active.cancelled = true;
          this.batch.push(active);
          next.ack();
          next.task.sink.admitted();
          await this.prefill(active);
        } else {
          await this.compute(this.timing.decodeStepS * (1 + 0.1 * (this.batch.length - 1)));
        }
        if (this.failure) return;
        this.endStep();
      }
    } finally {
      this.looping = false;
      this.env.onBusy(false);
    }
  }

  /**
   * The whole prompt in one step, reported the way exo's runner reports it (mlx-lm's
   * `generate_step`, which exo 0.3.70 calls with a 4096-token step; the real
   * `test/fixtures/exo/real/stream-normal.sse.txt` reads 0, 10, 11 for a 12-token
   * prompt): the total is one less than the prompt's tokens, 0 comes first, then one
   * line per chunk, each chunk at most 4096 and always leaving one token over; that
   * last token is read with the first decode step, whose token brings `total`. A cancel
   * stops the prefill at a chunk boundary.
   */
  private async prefill(active: Active): Promise<void> {
    const total = reportedPrefillTotal(active.task.promptTokens);
    active.task.sink.progress(0, total);
    let done = 0;
    while (total - done > 1 && !active.cancelled && !this.failure) {
      if (done > 0) await this.env.prefillGate();
      if (active.cancelled || this.failure) break;
      const chunk = Math.min(PREFILL_CHUNK_TOKENS, total - done - 1);
      const fixed = done === 0 ? this.timing.prefillFixedS : 0;
      await this.compute(fixed + chunk / this.timing.prefillTokensPerS);
      done += chunk;
      if (!active.cancelled) active.task.sink.progress(done, total);
    }
    active.prefilled = true;
    active.prefilledAt = performance.now();
  }

  /** One token for every prefilled task in the batch; finished and cancelled ones leave it. */
  private endStep(): void {
    for (const active of [...this.batch]) {
      const { task } = active;
      const stats = () => ({ promptS: (active.prefilledAt - active.startedAt) / 1000, decodeS: (performance.now() - active.prefilledAt) / 1000 });
      if (active.cancelled) {
        this.batch.splice(this.batch.indexOf(active), 1);
        task.sink.finished('cancelled', stats());
        continue;
      }
      if (!active.prefilled) continue;
      const last = active.generated + 1 >= task.maxTokens;
      if (active.generated === 0) {
        const total = reportedPrefillTotal(task.promptTokens);
        task.sink.progress(total, total);
      }
      task.sink.token(active.generated, `tok${active.generated} `, last ? 'length' : null);
      active.generated++;
      if (last) {
        this.batch.splice(this.batch.indexOf(active), 1);
        task.sink.finished('length', stats());
      }
    }
  }

  private async compute(seconds: number): Promise<void> {
    const factor = this.env.othersBusy() ? SHARED_GPU_FACTOR : 1;
    this.computing = true;
    try {
      await sleep(seconds * factor * this.env.timeScale * 1000);
    } finally {
      this.computing = false;
    }
  }
}

/** The prompt length exo's prefill progress reports: one less than the prompt's tokens (the real captures' `total_tokens` against their `usage.prompt_tokens`). */
function reportedPrefillTotal(promptTokens: number): number {
  return Math.max(0, promptTokens - 1);
}
