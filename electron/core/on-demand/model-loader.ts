/**
 * Load on request: a chat request for a catalog model with no local instance starts
 * one, through the same gates as a launch, and the request then waits in that model's
 * queue while it loads (phase `loading`, its TTFT with a `load` part). Requests that
 * come meanwhile wait for the same load: one runner, however many ask at once (LM
 * Studio once loaded two copies under that race).
 *
 * The gates, in order: the fast-synch policy (a ring instance, its value decided by the
 * policy; a load that would put two ring runners with fast synch on one GPU is refused,
 * never acknowledged on the operator's behalf), then the room: the caps and the fit
 * check, unloading the least recently used idle unpinned instances to make room
 * (room-plan.ts). A refusal is the request's answer, in words, and an event in the log.
 */
import type { Settings } from '../../../shared/api';
import { decideFastSynch, wouldShareGpuWithFastSynch } from '../../../shared/fast-synch-policy';
import { instanceLifecycle, localInstances } from '../../../shared/instance-state';
import type { FastSynchOverride, LocalInstanceSnapshot } from '../../../shared/snapshot';
import { NodeError } from '../events/node-error';
import type { ExobarNode } from '../node/node-types';
import { defaultFitChecker, runningModels, type FitChecker } from '../fit/fit-gate';
import { IdleReaper } from './idle-reaper';
import { planRoom, type ResidentInfo } from './room-plan';

export interface ModelLoaderOptions {
  node: ExobarNode;
  /** The launch's fit check (electron/core/fit/); tests replace the machine's readings. */
  fitChecker?: FitChecker;
  /** The settings now: `onDemand` (enabled, caps) and `defaultFastSynch`. */
  settings: () => Pick<Settings, 'onDemand' | 'defaultFastSynch'>;
  /** How often idle instances are checked against their time to live (default 1 s). */
  reapIntervalMs?: number;
}

/** What a request asks of its model's residency: its `keep_alive`, as seconds (null: never). */
export interface PrepareOptions {
  keepAliveSeconds?: number | null;
}

export class ModelLoader {
  private readonly loads = new Map<string, Promise<void>>();
  private readonly reaper: IdleReaper;

  constructor(private readonly options: ModelLoaderOptions) {
    this.reaper = new IdleReaper(options.node, options.reapIntervalMs ?? 1000);
  }

  /** True while loading on request is on (the setting `onDemand.enabled`). */
  get enabled(): boolean {
    return this.options.settings().onDemand.enabled;
  }

  /** Starts unloading idle instances past their time to live. */
  start(): void {
    this.reaper.start();
  }

  stop(): void {
    this.reaper.stop();
  }

  /**
   * Makes `modelId` servable for one request: nothing to do when it has an instance
   * (its `keep_alive` applied), else a load on request (or the one already under way).
   * Resolves once an instance exists, loading or serving: the request then waits in its
   * queue. Rejects with a NodeError that says why a load cannot go ahead. A model that is
   * not in the catalog, or loading on request turned off, resolves at once: the node's
   * own answer (404) follows.
   */
  async prepare(modelId: string, options: PrepareOptions = {}): Promise<void> {
    const { node } = this.options;
    const existing = this.instanceOf(modelId);
    if (existing) {
      this.keepAlive(existing.id, options);
      return;
    }
    if (!this.options.settings().onDemand.enabled) return;
    const model = node.models().find((m) => m.id === modelId);
    if (!model) return;
    let load = this.loads.get(modelId);
    if (!load) {
      load = this.load(modelId, options).finally(() => this.loads.delete(modelId));
      this.loads.set(modelId, load);
    } else {
      await load;
      const joined = this.instanceOf(modelId);
      if (joined) this.keepAlive(joined.id, options);
      return;
    }
    await load;
  }

  /** The local instance that serves `modelId` (or will: still loading), if any. */
  private instanceOf(modelId: string): LocalInstanceSnapshot | undefined {
    return localInstances(this.options.node.snapshot()).find((i) => i.model === modelId);
  }

  private keepAlive(instanceId: string, options: PrepareOptions): void {
    if (options.keepAliveSeconds !== undefined) this.options.node.setResidency(instanceId, { ttlSeconds: options.keepAliveSeconds });
  }

  private async load(modelId: string, options: PrepareOptions): Promise<void> {
    const { node } = this.options;
    try {
      const settings = this.options.settings();
      const model = node.models().find((m) => m.id === modelId)!;
      this.refuseFastSynchRisk(modelId, settings.defaultFastSynch);
      // The launch's fit check, beside what runs now; when it fails, unloading makes room.
      const catalog = node.models();
      const snapshot = node.snapshot();
      const fit = await (this.options.fitChecker ?? defaultFitChecker)({ models: [model], running: runningModels(snapshot, catalog) });
      const gpuLeft = fit.gpuLimitBytes === null ? Infinity : fit.gpuLimitBytes - fit.gpuInUseBytes;
      const plan = planRoom({
        model: { id: model.id, memoryBytes: fit.neededBytes },
        residents: localInstances(snapshot).map(residentInfo),
        maxModels: settings.onDemand.maxModels,
        maxBytes: settings.onDemand.maxBytes,
        availableBytes: fit.fits ? null : Math.min(fit.freeBytes - fit.headroomBytes, gpuLeft),
        memoryWords: fit.problems.join(' '),
      });
      if (!plan.ok) throw new NodeError('model_does_not_fit', plan.reason, 503);
      for (const victim of plan.evict) {
        try {
          await node.unloadInstance(victim.id, 'evicted');
        } catch (error) {
          // A request came for it meanwhile: it stays, and this load cannot have its room.
          throw new NodeError('model_does_not_fit', `${modelId} cannot load: ${victim.id} was to unload to make room, but ${(error as Error).message}`, 503);
        }
      }
      await node.createInstance({
        model: modelId,
        instanceType: 'ring',
        fastSynch: 'auto',
        acknowledgeRisk: false,
        onDemand: true,
        memoryBytes: fit.neededBytes,
        // The runner's prompt cache gets the cap the fit check counted.
        ...(fit.models[0]?.promptCacheBytes !== undefined ? { promptCacheBytes: fit.models[0].promptCacheBytes } : {}),
        ...(options.keepAliveSeconds !== undefined ? { ttlSeconds: options.keepAliveSeconds } : {}),
      });
    } catch (error) {
      const refusal = asRefusal(modelId, error);
      node.recordLoadRefused(modelId, refusal.code, refusal.message);
      throw refusal;
    }
  }

  /** The fast-synch gate of a launch, in a request's words: exobar never takes the risk on the operator's behalf. */
  private refuseFastSynchRisk(modelId: string, defaultFastSynch: FastSynchOverride): void {
    const decision = decideFastSynch('ring', 'auto', defaultFastSynch);
    const placed = localInstances(this.options.node.snapshot()).map((i) => ({
      id: i.id,
      model: i.model,
      instanceType: i.instanceType,
      fastSynch: i.fastSynch.enabled,
    }));
    const candidate = { id: 'on-demand', model: modelId, instanceType: 'ring' as const, fastSynch: decision.enabled };
    if (!wouldShareGpuWithFastSynch(placed, candidate)) return;
    const others = placed.filter((p) => p.fastSynch || decision.enabled).map((p) => p.model);
    throw new NodeError(
      'fast_synch_shared_gpu',
      `${modelId} was not loaded: it would share the GPU as a ring instance with ${others.join(', ')} while fast synch is on ` +
        `(${decision.enabled ? `the setting defaultFastSynch forces it on` : 'an instance runs with it forced on'}), which can collapse throughput ` +
        'or wedge the GPU until reboot. Set defaultFastSynch to "auto" (ring instances run with it off), or relaunch the instance with fast synch off; ' +
        'to take the risk, launch it yourself with "acknowledgeRisk": true.',
      409,
    );
  }
}

/** A local instance as the room plan sees it: busy while it has work or is not serving yet. */
function residentInfo(instance: LocalInstanceSnapshot): ResidentInfo {
  return {
    id: instance.id,
    model: instance.model,
    memoryBytes: instance.residency.memoryBytes,
    pinned: instance.residency.pinned,
    busy: instance.queue.requests.length > 0 || instanceLifecycle(instance) !== 'serving',
    lastUsedAt: instance.residency.lastUsedAt,
  };
}

/** What a failed load answers: a NodeError as it is, but a model with no runner here (an MLX model without the runtime) is not found. */
function asRefusal(modelId: string, error: unknown): NodeError {
  if (!(error instanceof NodeError)) return new NodeError('launch_failed', `${modelId} could not be loaded: ${(error as Error).message}`, 500);
  return error.code === 'model_not_found' ? new NodeError('model_not_found', error.message, 404) : error;
}
