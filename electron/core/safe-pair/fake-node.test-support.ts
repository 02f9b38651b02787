/**
 * A small in-memory ExobarNode for the launcher's tests: instances walk through exo's
 * lifecycle statuses on short timers (connecting, loading layer by layer, warming up,
 * ready), and a model can be told to fail while loading.
 */
import { SIM_MODELS, type CatalogModel } from '../../../shared/catalog';
import { decideFastSynch } from '../../../shared/fast-synch-policy';
import type { RunnerStatus } from '../../../shared/runner-protocol';
import { emptySnapshot, type FastSynchOverride, type LocalInstanceSnapshot, type LaunchProgress, type Snapshot } from '../../../shared/snapshot';
import { NodeError, type CreateInstanceOptions, type ExobarNode } from '../node-types';
import type { SafePairNode } from './launch-safe-pair';
import { instanceFixture } from '../../../test/support/instance-fixture';

export interface FakeNodeOptions {
  defaultFastSynch?: FastSynchOverride;
  /** Milliseconds per lifecycle step (each layer counts as one). */
  stepMs?: number;
  /** Models whose runner fails after loading this many layers. */
  failLoading?: Record<string, number>;
  /** Models whose createInstance throws this error. */
  failCreate?: Record<string, NodeError>;
  /** Makes deleteInstance reject. */
  failDelete?: boolean;
}

interface FakeInstance {
  snap: LocalInstanceSnapshot;
  timer: ReturnType<typeof setTimeout> | null;
  waiters: Array<{ resolve: () => void; reject: (err: Error) => void }>;
}

export class FakeNode implements SafePairNode, Pick<ExobarNode, 'models'> {
  readonly progress: LaunchProgress[] = [];
  readonly calls: string[] = [];
  private readonly instances = new Map<string, FakeInstance>();
  private nextId = 1;

  constructor(private readonly options: FakeNodeOptions = {}) {}

  models(): CatalogModel[] {
    return [...SIM_MODELS];
  }

  setLaunchProgress(progress: LaunchProgress | null): void {
    if (progress) this.progress.push(structuredClone(progress));
  }

  async createInstance(options: CreateInstanceOptions): Promise<LocalInstanceSnapshot> {
    this.calls.push(`create ${options.model}`);
    const failure = this.options.failCreate?.[options.model];
    if (failure) throw failure;
    const model = SIM_MODELS.find((m) => m.id === options.model);
    if (!model) throw new NodeError('model_not_found', `no model ${options.model}`, 404);
    const id = `inst-${this.nextId++}`;
    const decision = decideFastSynch(options.instanceType, options.fastSynch, this.options.defaultFastSynch ?? 'auto');
    const snap = fakeInstanceSnapshot(id, model, options.instanceType, { kind: 'RunnerIdle' });
    snap.fastSynch = { override: options.fastSynch, enabled: decision.enabled, reason: decision.reason, reported: null };
    const inst: FakeInstance = { snap, timer: null, waiters: [] };
    this.instances.set(id, inst);
    this.advance(inst, model.sim?.totalLayers ?? 4);
    return structuredClone(snap);
  }

  /** Adds an instance that is already ready (as if launched earlier). */
  addReady(modelId: string, instanceType: 'ring' | 'jaccl' = 'ring', fastSynch = false): string {
    const model = SIM_MODELS.find((m) => m.id === modelId);
    if (!model) throw new Error(`no model ${modelId}`);
    const id = `inst-${this.nextId++}`;
    const snap = fakeInstanceSnapshot(id, model, instanceType, { kind: 'RunnerReady' });
    snap.fastSynch = { override: 'auto', enabled: fastSynch, reason: fastSynch ? 'forced on by user' : 'ring instance', reported: fastSynch };
    this.instances.set(id, { snap, timer: null, waiters: [] });
    return id;
  }

  /** Puts an existing instance's runner into a failed state. */
  failInstance(id: string, message: string): void {
    const inst = this.instances.get(id);
    if (inst) this.setStatus(inst, { kind: 'RunnerFailed', errorMessage: message });
  }

  private advance(inst: FakeInstance, totalLayers: number): void {
    const steps: RunnerStatus[] = [{ kind: 'RunnerConnecting' }, { kind: 'RunnerConnected' }];
    const failAt = this.options.failLoading?.[inst.snap.model];
    for (let l = 0; l <= totalLayers; l++) {
      steps.push({ kind: 'RunnerLoading', layersLoaded: l, totalLayers });
      if (failAt === l) {
        steps.push({ kind: 'RunnerFailed', errorMessage: `out of memory at layer ${l}` });
        break;
      }
    }
    steps.push({ kind: 'RunnerLoaded' }, { kind: 'RunnerWarmingUp' }, { kind: 'RunnerReady' });
    const next = (): void => {
      const status = steps.shift();
      if (!status || inst.snap.runner.status.kind === 'RunnerFailed') return;
      this.setStatus(inst, status);
      if (status.kind !== 'RunnerReady' && status.kind !== 'RunnerFailed') inst.timer = setTimeout(next, this.options.stepMs ?? 2);
    };
    inst.timer = setTimeout(next, this.options.stepMs ?? 2);
  }

  private setStatus(inst: FakeInstance, status: RunnerStatus): void {
    inst.snap.runner.status = status;
    if (status.kind === 'RunnerReady') {
      inst.snap.fastSynch.reported = inst.snap.fastSynch.enabled;
      for (const w of inst.waiters.splice(0)) w.resolve();
    } else if (status.kind === 'RunnerFailed') {
      for (const w of inst.waiters.splice(0)) w.reject(new NodeError('runner_failed', status.errorMessage, 502));
    }
  }

  waitForReady(instanceId: string): Promise<void> {
    this.calls.push(`wait ${instanceId}`);
    const inst = this.instances.get(instanceId);
    if (!inst) return Promise.reject(new NodeError('instance_not_found', `no instance ${instanceId}`, 404));
    const status = inst.snap.runner.status;
    if (status.kind === 'RunnerReady') return Promise.resolve();
    if (status.kind === 'RunnerFailed') return Promise.reject(new NodeError('runner_failed', status.errorMessage, 502));
    return new Promise((resolve, reject) => inst.waiters.push({ resolve, reject }));
  }

  async deleteInstance(instanceId: string): Promise<void> {
    this.calls.push(`delete ${instanceId}`);
    if (this.options.failDelete) throw new Error('delete refused');
    const inst = this.instances.get(instanceId);
    if (!inst) throw new NodeError('instance_not_found', `no instance ${instanceId}`, 404);
    if (inst.timer) clearTimeout(inst.timer);
    for (const w of inst.waiters.splice(0)) w.reject(new NodeError('instance_deleted', 'deleted', 410));
    this.instances.delete(instanceId);
  }

  snapshot(): Snapshot {
    return {
      ...emptySnapshot(),
      instances: [...this.instances.values()].map((i) => structuredClone(i.snap)),
      launch: this.progress.at(-1) ?? null,
    };
  }

  async shutdown(): Promise<void> {
    for (const id of [...this.instances.keys()]) await this.deleteInstance(id);
  }
}

function fakeInstanceSnapshot(id: string, model: CatalogModel, instanceType: 'ring' | 'jaccl', status: RunnerStatus): LocalInstanceSnapshot {
  return instanceFixture({
    id,
    model: model.id,
    modelName: model.name,
    engine: model.engine,
    simulated: model.simulated,
    instanceType,
    runner: { status, pid: 1000, restarts: 0, lastExit: null, malformedLines: 0 },
    fastSynch: { override: 'auto', enabled: false, reason: 'ring instance', reported: null },
  });
}
