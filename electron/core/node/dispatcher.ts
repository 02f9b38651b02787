/**
 * How a generation task reaches its runner.
 *
 * exobar's dispatcher writes it at once and never waits. The blocking baseline
 * reproduces exo's worker before its fix: one loop for every runner of the node that
 * awaited each task's acknowledgement, so a runner mid-prefill (which acknowledges only
 * between steps) stalled the dispatch of every other model. It exists for the benchmark
 * and must stay identical to exobar in everything else.
 */
export interface DispatchJob {
  /**
   * Writes the task to its runner. False when nothing was written (the request ended
   * meanwhile, or its runner is not ready and the request went back to its queue):
   * there is no acknowledgement to wait for then.
   */
  send(): boolean;
  /** Settles when the runner acknowledged the task or the request ended. */
  acknowledged: Promise<void>;
}

export interface Dispatcher {
  dispatch(job: DispatchJob): void;
}

export type DispatchMode = 'nonblocking' | 'blocking-baseline';

export class NonBlockingDispatcher implements Dispatcher {
  dispatch(job: DispatchJob): void {
    void job.send();
  }
}

export class BlockingBaselineDispatcher implements Dispatcher {
  private readonly jobs: DispatchJob[] = [];
  private running = false;

  dispatch(job: DispatchJob): void {
    this.jobs.push(job);
    if (!this.running) void this.loop();
  }

  private async loop(): Promise<void> {
    this.running = true;
    for (let job = this.jobs.shift(); job; job = this.jobs.shift()) {
      if (job.send()) await job.acknowledged;
    }
    this.running = false;
  }
}

export function createDispatcher(mode: DispatchMode): Dispatcher {
  return mode === 'blocking-baseline' ? new BlockingBaselineDispatcher() : new NonBlockingDispatcher();
}
