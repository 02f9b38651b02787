/**
 * Cancelled requests exo keeps generating ("ghost generations"). Real exo (0.3.70)
 * deletes a cancelled task about 10 ms after marking it Cancelled, before its worker
 * tells the runner, so the runner decodes the rest of the request for nobody: it stays
 * `RunnerRunning` with no task for as long as that takes (12-15 s for 2000 tokens of a
 * tiny model; test/fixtures/exo/real/state-after-cancel-ghost.json). On a shared Mac it
 * holds the GPU meanwhile, and the model's next request waits behind it.
 *
 * What the state shows is a runner `RunnerRunning` while exo has no live generation task
 * (Pending or Running) for its instance. A task in a final status (Complete, Cancelled,
 * Failed, TimedOut) is never live, whatever else is in the state: real exo sometimes
 * keeps a cancelled task listed as `Cancelled` for minutes (10 of 20 cancels in one run)
 * while its runner generates on, and counting it would hide exactly that ghost. A
 * request that just finished can
 * look like that for one poll (its task goes before its runner turns Ready), so the
 * condition counts only once it has held for `confirmMs`.
 */
import type { ExoInstance, ExoRunnerStatus, ExoTask } from '../attach/parse-exo-state';

/** exo's task statuses that mean exo still has the request: any other is final. */
const LIVE_TASK = new Set(['Pending', 'Running']);

/** One instance's ghost generation: since when exobar has seen it, on which Macs. */
export interface ExoGhost {
  since: number;
  nodeIds: string[];
}

export const DEFAULT_GHOST_CONFIRM_MS = 1_000;

export class ExoGhostTracker {
  private readonly seen = new Map<string, ExoGhost>();
  private now = 0;
  private lastObserved: [Map<string, ExoInstance>, Map<string, ExoRunnerStatus>, Map<string, ExoTask>] | null = null;

  constructor(private readonly confirmMs = DEFAULT_GHOST_CONFIRM_MS) {}

  /** Takes in one fast reading (instances, runners and tasks of the same poll). */
  observe(now: number, instances: Map<string, ExoInstance>, runners: Map<string, ExoRunnerStatus>, tasks: Map<string, ExoTask>): void {
    this.now = now;
    // The same maps as last time: the same ghosts, only older.
    const last = this.lastObserved;
    if (last && last[0] === instances && last[1] === runners && last[2] === tasks) return;
    this.lastObserved = [instances, runners, tasks];
    const withTask = new Set<string>();
    for (const task of tasks.values()) if (task.kind === 'TextGeneration' && task.instanceId && LIVE_TASK.has(task.status)) withTask.add(task.instanceId);
    for (const instance of instances.values()) {
      const running = instance.shards.filter((s) => runners.get(s.runnerId)?.tag === 'RunnerRunning');
      if (running.length === 0 || withTask.has(instance.instanceId)) {
        this.seen.delete(instance.instanceId);
        continue;
      }
      const nodeIds = running.map((s) => s.nodeId ?? 'unknown');
      const earlier = this.seen.get(instance.instanceId);
      this.seen.set(instance.instanceId, { since: earlier?.since ?? now, nodeIds });
    }
    for (const id of this.seen.keys()) if (!instances.has(id)) this.seen.delete(id);
  }

  /** The instance's ghost generation once confirmed, else null. */
  ghostOf(exoInstanceId: string): ExoGhost | null {
    const ghost = this.seen.get(exoInstanceId);
    return ghost && this.now - ghost.since >= this.confirmMs ? ghost : null;
  }

  /** True while every instance of `model` in `instances` is generating a cancelled request. */
  modelBusy(model: string, instances: Iterable<ExoInstance>): boolean {
    let any = false;
    for (const instance of instances) {
      if (instance.modelId !== model) continue;
      if (!this.ghostOf(instance.instanceId)) return false;
      any = true;
    }
    return any;
  }
}
