/**
 * What the operator and the loader do to the node's instances: create one (the
 * fast-synch policy decided before any runner spawns), change its fast synch, retry its
 * runner, pin it or set its idle time to live, delete or unload it (shown as stopping
 * until its runner has exited). Each check happens before anything changes.
 */
import { join } from 'node:path';
import type { CatalogModel } from '../../../shared/catalog';
import { decideFastSynch, fastSynchEnv, wouldShareGpuWithFastSynch, type FastSynchDecision } from '../../../shared/fast-synch-policy';
import type { FastSynchOverride, LocalInstanceSnapshot } from '../../../shared/snapshot';
import type { RunnerEngineOptions } from '../../../shared/runner-protocol';
import { defaultIdleTtl } from '../on-demand/on-demand-settings';
import { ResidencyState } from '../on-demand/residency-state';
import { unloadRefusal } from '../on-demand/unload-refusal';
import { mlxInstanceTypeProblem } from '../mlx/mlx-instance-type';
import type { PacingController } from '../pacing/pacing-controller';
import { pacedRunnerOf } from './paced-instance';
import { ratePriorFor } from '../supervisor/runner-rates';
import type { RunnerRegistry } from '../supervisor/runner-registry';
import type { SpawnSpec } from '../supervisor/spawn-spec';
import type { Dispatcher } from './dispatcher';
import type { EventLog } from './event-log';
import { Instance } from './instance';
import type { InstanceSet } from './instance-set';
import { NodeError } from '../events/node-error';
import type { CreateInstanceOptions, NodeOptions, ResidencyUpdate, UnloadReason } from './node-types';
import type { RequestBook } from './request-book';
import type { RunnerOptions } from './runner-options';

export interface InstanceControlDeps {
  options: NodeOptions;
  maxInFlightPerInstance: number;
  runners: RunnerOptions;
  instances: InstanceSet;
  requests: RequestBook;
  pacing: Pick<PacingController, 'add' | 'remove'>;
  eventLog: EventLog;
  dispatcher: Dispatcher;
  processes: RunnerRegistry;
  findModel(id: string): CatalogModel;
  changed(): void;
  /** True once the node shuts down: nothing new is created then. */
  shuttingDown(): boolean;
}

function riskError(model: string): NodeError {
  return new NodeError(
    'fast_synch_shared_gpu',
    `${model} would share the GPU with another model while fast synch is on, which can collapse throughput ` +
      'or wedge the GPU until reboot; use fast synch off, or send "acknowledgeRisk": true to go ahead',
    409,
  );
}

export class InstanceControl {
  private counter = 0;
  private readonly defaultFastSynch: FastSynchOverride;

  constructor(private readonly deps: InstanceControlDeps) {
    this.defaultFastSynch = deps.options.defaultFastSynch ?? 'auto';
  }

  async create(create: CreateInstanceOptions): Promise<LocalInstanceSnapshot> {
    const { instances, eventLog } = this.deps;
    if (this.deps.shuttingDown()) throw new NodeError('node_shutdown', 'the node is shutting down', 503);
    const model = this.deps.findModel(create.model);
    // Before any check: nothing awaits between the checks and the instance's creation.
    const engine = await this.deps.runners.engineFor(model, create);
    const typeProblem = model.engine === 'mlx' ? mlxInstanceTypeProblem(create.instanceType) : null;
    if (typeProblem) throw new NodeError('invalid_request', typeProblem, 400);
    const decision = decideFastSynch(create.instanceType, create.fastSynch, this.defaultFastSynch, instances.placedExcept().length > 0);
    const candidate = { id: 'new', model: model.id, instanceType: create.instanceType, fastSynch: decision.enabled };
    if (!create.acknowledgeRisk && wouldShareGpuWithFastSynch(instances.placedExcept(), candidate)) throw riskError(model.id);
    this.counter += 1;
    const id = `${model.id.split('/').pop()}-${this.counter}`;
    if (!this.deps.runners.command(model, id, engine)) {
      throw new NodeError(
        'model_not_found',
        `no runner available for ${model.id} (engine ${model.engine}) on this machine` +
          (model.engine === 'mlx' ? ': the MLX runtime is missing (Set up MLX runtime, or set mlxPython in settings)' : ''),
        400,
      );
    }
    const instance = this.build(id, model, engine, create, decision);
    instances.add(instance);
    eventLog.record({
      kind: 'instance_created',
      instanceId: id,
      data: {
        model: model.id,
        instanceType: create.instanceType,
        fastSynch: decision.enabled,
        reason: decision.reason,
        onDemand: create.onDemand ?? false,
        pinned: create.pin ?? false,
      },
    });
    this.deps.pacing.add(pacedRunnerOf(instance));
    instance.start();
    this.deps.changed();
    return instance.snapshot();
  }

  async update(instanceId: string, update: { fastSynch: FastSynchOverride; mode: 'drain' | 'cancel'; acknowledgeRisk: boolean }): Promise<void> {
    const { instances } = this.deps;
    const instance = instances.require(instanceId);
    const decision = decideFastSynch(instance.instanceType, update.fastSynch, this.defaultFastSynch, instances.placedExcept(instance.id).length > 0);
    const candidate = { id: instance.id, model: instance.model.id, instanceType: instance.instanceType, fastSynch: decision.enabled };
    // Turning fast synch off only lowers the risk: only turning it on needs the acknowledgement.
    if (decision.enabled && !update.acknowledgeRisk && wouldShareGpuWithFastSynch(instances.placedExcept(instance.id), candidate)) {
      throw riskError(instance.model.id);
    }
    instance.override = update.fastSynch;
    instance.decision = decision;
    this.deps.changed();
    await instance.relaunch(update.mode);
  }

  retry(instanceId: string): void {
    this.deps.instances.require(instanceId).retry();
  }

  async delete(instanceId: string): Promise<void> {
    const instance = this.deps.instances.require(instanceId);
    this.deps.instances.takeOut(instanceId);
    this.deps.pacing.remove(instanceId);
    this.deps.eventLog.record({ kind: 'instance_deleted', instanceId });
    await this.deps.instances.disposeShown(instance, new NodeError('instance_deleted', `instance ${instanceId} was stopped`, 503), this.deps.changed);
  }

  async unload(instanceId: string, reason: UnloadReason): Promise<void> {
    const instance = this.deps.instances.require(instanceId);
    const refusal = unloadRefusal(instance, reason);
    if (refusal) throw refusal;
    const now = performance.now();
    this.deps.instances.takeOut(instanceId);
    this.deps.eventLog.record({
      kind: 'instance_unloaded',
      instanceId,
      data: { model: instance.model.id, reason, idleMs: Math.round(now - instance.residency.lastUsedAt), memoryBytes: instance.residency.memoryBytes },
    });
    await this.deps.instances.disposeShown(instance, new NodeError('instance_deleted', `instance ${instanceId} was unloaded`, 503), this.deps.changed);
  }

  setResidency(instanceId: string, update: ResidencyUpdate): void {
    const instance = this.deps.instances.require(instanceId);
    if (update.pin !== undefined) instance.residency.pinned = update.pin;
    if (update.ttlSeconds !== undefined) instance.residency.ttlOverride = update.ttlSeconds;
    // A new time to live counts from now, as a request's keep_alive does.
    instance.residency.touch();
    this.deps.changed();
  }

  /** The instance and its supervisor's configuration; not started. */
  private build(id: string, model: CatalogModel, engine: RunnerEngineOptions, create: CreateInstanceOptions, decision: FastSynchDecision): Instance {
    const { options, runners, instances } = this.deps;
    const instance: Instance = new Instance(
      {
        id,
        model,
        instanceType: create.instanceType,
        override: create.fastSynch,
        decision,
        queueCapacity: options.queueCapacity ?? 64,
        maxInFlight: this.deps.maxInFlightPerInstance,
        supervisor: {
          // The policy's environment wins over anything the command brings (docs/architecture.md, invariant 4).
          spawnSpec: (): SpawnSpec => {
            const spec = runners.command(model, id, engine)!;
            return { ...spec, env: { ...spec.env, ...fastSynchEnv(instance.decision.enabled) } };
          },
          logDir: join(options.dataDir, 'logs', id),
          logGeneratedText: options.logGeneratedText ?? false,
          processes: this.deps.processes,
          watchdog: runners.watchdogFor(model),
          rates: ratePriorFor(model, runners.simTimeScale),
          // Every other local runner with work computes on this GPU too.
          gpuSharers: () => instances.all().filter((other) => other.id !== id && other.load > 0).length,
          restart: { baseDelayMs: 500, maxDelayMs: 30_000, maxRestarts: 5, ...options.restart },
          model: model.id,
          logger: options.logger,
        },
        residency: new ResidencyState(
          {
            pinned: create.pin ?? false,
            ttlSeconds: create.ttlSeconds,
            loadedOnDemand: create.onDemand ?? false,
            memoryBytes: create.memoryBytes ?? model.memoryBytes,
          },
          options.idleTtlSeconds ?? defaultIdleTtl,
        ),
      },
      this.deps.dispatcher,
      this.deps.eventLog,
      this.deps.changed,
      (request) => this.deps.requests.recordEnded(request, instance),
    );
    return instance;
  }
}
