/**
 * Unloads idle instances past their time to live. Reads the snapshot (each instance's
 * `residency.unloadsAt`), and lets the node refuse what may not unload: the node checks
 * again, synchronously, that nothing is queued or in flight and the instance is not
 * pinned, so a request that arrived since the snapshot keeps its instance.
 */
import { localInstances } from '../../../shared/instance-state';
import type { ExobarNode } from '../node/node-types';

export class IdleReaper {
  private timer: NodeJS.Timeout | null = null;
  private readonly unloading = new Set<string>();

  constructor(
    private readonly node: Pick<ExobarNode, 'snapshot' | 'unloadInstance'>,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One look: every instance whose unload time has passed unloads (one unload at a time per instance). */
  tick(now = Date.now()): void {
    for (const instance of localInstances(this.node.snapshot())) {
      const at = instance.residency.unloadsAt;
      if (at === null || at > now || this.unloading.has(instance.id)) continue;
      this.unloading.add(instance.id);
      this.node
        .unloadInstance(instance.id, 'idle')
        // Refused (a request came, it was pinned meanwhile) or gone already: it stays, or there is nothing to do.
        .catch(() => undefined)
        .finally(() => this.unloading.delete(instance.id));
    }
  }
}
