/** The runner's lifecycle status (exo's names), announced on stdout whenever it changes. */
import type { RunnerStatus, RunnerStatusKind } from '../../../shared/runner-protocol';
import type { RunnerOutputWriter } from './output';

export class RunnerState {
  private current: RunnerStatus = { kind: 'RunnerIdle' };

  constructor(private readonly out: RunnerOutputWriter) {}

  get kind(): RunnerStatusKind {
    return this.current.kind;
  }

  /** Sets and announces a status (RunnerLoading is announced on every progress step). */
  set(status: RunnerStatus): void {
    this.current = status;
    this.out.runnerStatus(status);
  }
}
