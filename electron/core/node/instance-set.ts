/**
 * The node's instances: those serving (the ones requests go to), those taken out of
 * service whose runner has not exited yet (every view lists them as stopping, and the
 * fit check counts their memory as used, until the exit), and every one until its
 * runner is disposed (what a last-resort kill must reach).
 */
import type { TokenGap } from '../sharing/decode-timing';
import type { BusyNeighbour } from '../sharing/sharing-stats';
import type { Instance } from './instance';
import { NodeError } from '../events/node-error';

export class InstanceSet {
  private readonly serving = new Map<string, Instance>();
  private readonly stopping = new Map<string, Instance>();
  /** Instances until their runner is disposed: deleted ones whose runner is still stopping included. */
  private readonly undisposed = new Set<Instance>();

  /** The instances in service, in creation order. */
  all(): Instance[] {
    return [...this.serving.values()];
  }

  /** The instances taken out of service whose runner is still stopping. */
  stoppingNow(): Instance[] {
    return [...this.stopping.values()];
  }

  get(id: string): Instance | undefined {
    return this.serving.get(id);
  }

  /** The instance in service with this id; a 404 NodeError when there is none. */
  require(id: string): Instance {
    const instance = this.serving.get(id);
    if (!instance) throw new NodeError('instance_not_found', `no instance "${id}"`, 404);
    return instance;
  }

  add(instance: Instance): void {
    this.serving.set(instance.id, instance);
    this.undisposed.add(instance);
  }

  /** Takes an instance out of service (no request reaches it any more); its runner is still to be stopped. */
  takeOut(id: string): void {
    this.serving.delete(id);
  }

  /** Takes every instance out of service (the node's shutdown); returns them. */
  takeOutAll(): Instance[] {
    const all = this.all();
    this.serving.clear();
    return all;
  }

  /** Stops an instance taken out of service, shown as stopping until its runner has exited; `changed` at each step. */
  async disposeShown(instance: Instance, error: NodeError, changed: () => void): Promise<void> {
    this.stopping.set(instance.id, instance);
    try {
      // Its requests end now; its runner's state says stopping until the process is gone.
      const disposed = instance.dispose(error);
      changed();
      await disposed;
    } finally {
      this.stopping.delete(instance.id);
      this.undisposed.delete(instance);
      changed();
    }
  }

  /** Every runner disposed (the node's shutdown): nothing is left to kill. */
  forgetDisposed(): void {
    this.undisposed.clear();
  }

  /** The pids of every runner process alive now, stopping ones included. */
  livePids(): number[] {
    return [...this.undisposed].flatMap((i) => i.livePids());
  }

  /** The instances in service but one, as the fast-synch policy sees them. */
  placedExcept(excludeId?: string) {
    return this.all()
      .filter((i) => i.id !== excludeId)
      .map((i) => ({ id: i.id, model: i.model.id, instanceType: i.instanceType, fastSynch: i.decision.enabled }));
  }

  /** The other runners on this Mac's GPU that prefilled or decoded during `gap` (all local runners share one GPU). */
  busyNeighbours(instance: Instance, gap: TokenGap): BusyNeighbour[] {
    const busy: BusyNeighbour[] = [];
    for (const other of this.serving.values()) {
      if (other === instance) continue;
      const phase = other.phases.phaseDuring(gap.at - gap.gapMs, gap.at);
      if (phase !== 'idle') busy.push({ instanceId: other.id, model: other.model.id, modelName: other.model.name, phase, node: null });
    }
    return busy;
  }

  /** The ids of the other instances whose runner was busy between `from` and `until`. */
  busyDuring(instance: Instance, from: number, until: number): string[] {
    return this.all()
      .filter((other) => other !== instance && other.wasBusyDuring(from, until))
      .map((other) => other.id);
  }
}
