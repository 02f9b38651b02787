/**
 * Placing on demand on an attached exo (the setting `exo.placeOnDemand`): a chat
 * request for a model exo has downloaded but not placed is held while exobar places it
 * through exo's own placement, then goes to exo once every runner is ready; an instance
 * exobar placed this way is deleted after its idle time to live. One exobar never
 * deletes an instance someone else placed, nor one it reused.
 *
 * The gates are a launch's (exo-safe-pair.ts): a ring, pipeline, one-node placement
 * (`GET /instance/placement`), the model's share against each Mac's available memory
 * less headroom (placement reserves nothing), and the fast-synch gate: a ring instance
 * landing on a Mac that already runs one, with fast synch on there (or assumed on: exo
 * does not publish it), is refused; exobar never takes that risk on the operator's
 * behalf. A refusal is the request's answer, in words.
 *
 * Concurrent requests for one model share one placement.
 */
import { DEFAULT_HEADROOM_BYTES } from '../../../../shared/safe-pair-plan';
import { formatMemory } from '../../../../shared/memory-words';
import { NodeError } from '../../node/node-types';
import { exoCall, placeRing, readCluster, type ExoCluster } from './exo-cluster-api';
import { deleteExoInstance, waitForRunners, type FastSynchOf } from './exo-safe-pair';

/** A placement, deletion or refusal, for the event log and the request log. */
export type ExoPlacementEvent =
  | { kind: 'placed'; model: string; instanceId: string; loadMs: number }
  | { kind: 'deleted'; model: string; instanceId: string; idleMs: number; reason: 'idle' }
  | { kind: 'refused'; model: string; code: string; reason: string };

/** An instance exobar placed on demand, as the snapshot and the views see it. */
export interface OwnedPlacement {
  instanceId: string;
  model: string;
  /** Seconds idle before exobar deletes it; null: never. */
  ttlSeconds: number | null;
  /** Epoch ms of the last request's arrival or end. */
  lastUsedAt: number;
  /** Epoch ms at which exobar deletes it if nothing comes; null while in use or kept. */
  unloadsAt: number | null;
}

export interface ExoPlacerOptions {
  /** The attached exo's address, or null. */
  url: () => string | null;
  /** Each Mac's fast-synch value as exobar knows it (exo's log, else exo's default: on, assumed). */
  fastSynchOf: FastSynchOf;
  /** The default idle time to live, seconds (the setting `onDemand.idleTtlSeconds`); null never. */
  idleTtlSeconds: () => number | null;
  /** True while exobar has a request of the model queued or in flight at exo. */
  busy: (model: string) => boolean;
  onEvent?: (event: ExoPlacementEvent) => void;
  headroomBytes?: number;
  /** Deadline for the runners to be ready (default 10 min). */
  readyTimeoutMs?: number;
  pollMs?: number;
  /** How often idle placements are checked (default 1 s). */
  reapIntervalMs?: number;
  now?: () => number;
}

interface Owned {
  instanceId: string;
  model: string;
  ttlOverride: number | null | undefined;
  lastUsedAt: number;
}

export class ExoPlacer {
  private readonly placing = new Map<string, Promise<void>>();
  private readonly owned = new Map<string, Owned>();
  private readonly deleting = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private readonly now: () => number;

  constructor(private readonly options: ExoPlacerOptions) {
    this.now = options.now ?? Date.now;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.reap(), this.options.reapIntervalMs ?? 1000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /**
   * Places `model` on exo and resolves once its runners are ready; a placement under way
   * is joined. Resolves at once when exo already has an instance of it. Rejects with a
   * NodeError in words when a gate refuses or exo fails to load it.
   */
  async place(model: string, keepAliveSeconds?: number | null): Promise<void> {
    let placing = this.placing.get(model);
    if (!placing) {
      placing = this.placeOnce(model).finally(() => this.placing.delete(model));
      this.placing.set(model, placing);
    }
    await placing;
    this.use(model, keepAliveSeconds);
  }

  /** A request of `model` arrived or ended: its idle clock starts over; `keep_alive` sets its time to live. */
  use(model: string, keepAliveSeconds?: number | null): void {
    for (const o of this.owned.values()) {
      if (o.model !== model) continue;
      o.lastUsedAt = this.now();
      if (keepAliveSeconds !== undefined) o.ttlOverride = keepAliveSeconds;
    }
  }

  /** The instances exobar placed on demand and still owns. */
  placements(): OwnedPlacement[] {
    return [...this.owned.values()].map((o) => {
      const ttl = this.ttlOf(o);
      const busy = this.options.busy(o.model);
      return {
        instanceId: o.instanceId,
        model: o.model,
        ttlSeconds: ttl,
        lastUsedAt: o.lastUsedAt,
        unloadsAt: ttl === null || busy ? null : o.lastUsedAt + ttl * 1000,
      };
    });
  }

  /** True when exobar placed this exo instance on demand (and so may delete it when idle). */
  owns(instanceId: string): boolean {
    return this.owned.has(instanceId);
  }

  /** One look: deletes each owned instance idle past its time to live; forgets one exo no longer has. */
  async reap(): Promise<void> {
    const url = this.options.url();
    if (!url || this.owned.size === 0) return;
    const now = this.now();
    for (const o of [...this.owned.values()]) {
      if (this.deleting.has(o.instanceId) || this.placing.has(o.model)) continue;
      if (this.options.busy(o.model)) {
        o.lastUsedAt = now;
        continue;
      }
      const ttl = this.ttlOf(o);
      if (ttl === null || now - o.lastUsedAt < ttl * 1000) continue;
      this.deleting.add(o.instanceId);
      try {
        // Read now: an instance someone else deleted meanwhile is only forgotten.
        const cluster = await readCluster(url);
        if (!cluster.instances.has(o.instanceId) && ![...cluster.instances.values()].some((i) => i.instanceId === o.instanceId)) {
          this.owned.delete(o.instanceId);
          continue;
        }
        await deleteExoInstance(url, o.instanceId, o.model);
        this.owned.delete(o.instanceId);
        this.options.onEvent?.({ kind: 'deleted', model: o.model, instanceId: o.instanceId, idleMs: now - o.lastUsedAt, reason: 'idle' });
      } catch {
        // exo did not answer: the next look tries again
      } finally {
        this.deleting.delete(o.instanceId);
      }
    }
  }

  private ttlOf(o: Owned): number | null {
    if (o.ttlOverride !== undefined) return o.ttlOverride;
    return this.options.idleTtlSeconds();
  }

  private async placeOnce(model: string): Promise<void> {
    const url = this.options.url();
    if (!url) throw new NodeError('launch_failed', `${model} cannot be placed: no exo is attached`, 503);
    const started = this.now();
    let created: string | null = null;
    try {
      const cluster = await readCluster(url);
      if ([...cluster.instances.values()].some((i) => i.modelId === model)) return;
      const placed = await placeRing(url, model);
      if (!placed.ok) throw new NodeError('model_does_not_fit', `exo cannot place ${model}: ${placed.reason}`, 503);
      this.checkMemory(model, cluster, placed.instance.shards, placed.storageBytes);
      this.checkFastSynch(model, cluster, placed.instance.shards);
      const answer = await exoCall(url, 'POST', '/instance', { instance: placed.tagged });
      if (answer.status !== 200) throw new NodeError('launch_failed', `exo refused to create the instance of ${model}: ${answer.message}`, 503);
      created = placed.instance.instanceId;
      this.owned.set(created, { instanceId: created, model, ttlOverride: undefined, lastUsedAt: this.now() });
      await waitForRunners(url, created, model, { readyTimeoutMs: this.options.readyTimeoutMs, pollMs: this.options.pollMs });
      this.options.onEvent?.({ kind: 'placed', model, instanceId: created, loadMs: this.now() - started });
    } catch (error) {
      const refusal =
        error instanceof NodeError ? error : new NodeError('launch_failed', `${model} could not be placed on exo: ${(error as Error).message}`, 503);
      if (created) {
        this.owned.delete(created);
        await deleteExoInstance(url, created, model).catch(() => undefined);
      }
      this.options.onEvent?.({ kind: 'refused', model, code: refusal.code, reason: refusal.message });
      throw refusal;
    }
  }

  /** The model's share on each Mac against its available memory less headroom, read now. */
  private checkMemory(model: string, cluster: ExoCluster, shards: Array<{ nodeId: string | null }>, storageBytes: number | null): void {
    if (storageBytes === null) return;
    const headroom = this.options.headroomBytes ?? DEFAULT_HEADROOM_BYTES;
    const need = storageBytes / Math.max(1, shards.length);
    for (const shard of shards) {
      const facts = shard.nodeId ? cluster.nodes.get(shard.nodeId) : undefined;
      const available = facts?.memoryAvailableBytes ?? 0;
      if (need > available - headroom)
        throw new NodeError(
          'model_does_not_fit',
          `${model} was not placed: ${facts?.name ?? shard.nodeId} has ${formatMemory(available)} available, and ${model} needs ${formatMemory(need)} there plus ${formatMemory(headroom)} headroom`,
          503,
        );
    }
  }

  /** Refuses a ring instance on a Mac that already runs one with fast synch on (or assumed on). */
  private checkFastSynch(model: string, cluster: ExoCluster, shards: Array<{ nodeId: string | null }>): void {
    for (const shard of shards) {
      if (!shard.nodeId) continue;
      const fs = this.options.fastSynchOf(shard.nodeId);
      if (!fs.enabled) continue;
      const others = [...cluster.instances.values()].filter((i) => i.instanceType === 'ring' && i.shards.some((s) => s.nodeId === shard.nodeId));
      if (others.length === 0) continue;
      const name = cluster.nodes.get(shard.nodeId)?.name ?? shard.nodeId;
      throw new NodeError(
        'fast_synch_shared_gpu',
        `${model} was not placed: it would share ${name}'s GPU as a ring instance with ${others.map((i) => i.modelId).join(', ')} while fast synch is ` +
          `${fs.assumed ? "on (assumed: exo does not publish it, and exo's default is on)" : 'on'}, which can collapse throughput or wedge the GPU. ` +
          'Start exo there with EXO_FAST_SYNCH=false, or place the model yourself.',
        409,
      );
    }
  }
}
