/**
 * The warnings the node raises about this Mac's instances, its warning provider with
 * the hub: two rings sharing the GPU with fast synch on, a runner refused for a
 * fast-synch mismatch, and a runner whose load stopped moving (runner_load_stalled,
 * load-stall/). A stalled load makes no event of its own, so the snapshot clock asks
 * `stalled()` whether the clock must renew the snapshot.
 */
import { sharedGpuWarnings } from '../../../shared/fast-synch-policy';
import type { Warning } from '../../../shared/snapshot';
import type { InstanceSet } from './instance-set';
import { RunnerLoadStallTracker, type RunnerLoadStall } from './load-stall/runner-load-stall';
import { runnerLoadStalledWarnings } from './load-stall/runner-load-stall-warnings';
import type { RunnerOptions } from './runner-options';

export class LocalWarnings {
  private readonly loadStalls = new RunnerLoadStallTracker();
  /** The stalls the last warnings named: the clock renews the snapshot while any is shown. */
  private shownStalls: RunnerLoadStall[] = [];

  constructor(
    private readonly instances: InstanceSet,
    private readonly runners: Pick<RunnerOptions, 'loadStallFloorMs'>,
  ) {}

  /** The warnings now (the hub reads them at each change). */
  now(): Warning[] {
    const next = sharedGpuWarnings(this.instances.placedExcept());
    for (const instance of this.instances.all()) {
      if (instance.fatalError?.code === 'fast_synch_mismatch') {
        next.push({
          code: 'fast_synch_mismatch',
          instanceIds: [instance.id],
          title: `${instance.model.id} refused: its runner sees a different fast-synch value`,
          risk: instance.fatalError.message,
          fix: 'Remove whatever overrides MLX_METAL_FAST_SYNCH or EXO_FAST_SYNCH in the runner environment, then relaunch it.',
        });
      }
    }
    this.shownStalls = this.stallsNow();
    next.push(
      ...runnerLoadStalledWarnings(
        this.shownStalls,
        (id) => {
          const i = this.instances.get(id);
          return i ? { id, modelId: i.model.id, modelName: i.model.name, sizeBytes: i.model.memoryBytes, waiting: i.live.length } : null;
        },
        performance.now(),
      ),
    );
    return next;
  }

  /** Whether a load is stalled now or a stall is still shown: its age moves with the clock. */
  stalled(): boolean {
    return this.stallsNow().length > 0 || this.shownStalls.length > 0;
  }

  /** This Mac's runners that stopped moving while loading, read now (runner_load_stalled). */
  private stallsNow(): RunnerLoadStall[] {
    return this.loadStalls.observe(
      performance.now(),
      this.instances.all().map((i) => ({
        instanceId: i.id,
        state: i.supervisor.runnerState,
        status: i.supervisor.runnerStatus,
        sizeBytes: i.model.memoryBytes,
        floorMs: this.runners.loadStallFloorMs(i.model),
      })),
    );
  }
}
