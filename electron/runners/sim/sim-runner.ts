/**
 * The sim runner's lifecycle (exo's statuses): Idle → Loading → Loaded → WarmingUp →
 * Ready ⇄ Running → ShuttingDown → Shutdown. Lifecycle tasks run one at a time; a
 * TextGeneration on a Ready runner starts the generation loop, which owns the inbox
 * until nothing is left to generate.
 */
import { kvBytesPerToken, type CatalogModel, type SimTimings } from '../../../shared/catalog';
import type { RunnerEngineOptions, Task } from '../../../shared/runner-protocol';
import { GenerationEngine, type TextGenerationTask } from './generation-engine';
import type { Inbox } from './inbox';
import type { Logger } from './logger';
import type { RunnerOutputWriter } from './output';
import type { Pacer } from './pacer';
import { PrefillPacingState } from './prefill-pacing';
import { SimPromptCache } from './prompt-cache';
import { RunnerState } from './runner-state';
import type { SharedGpu } from './shared-gpu';

/** RunnerLoading updates sent while loading (exo reports layers as they load). */
const LOADING_UPDATES = 8;

export interface SimRunnerDeps extends RunnerEngineOptions {
  model: CatalogModel & { sim: SimTimings };
  timeScale: number;
  out: RunnerOutputWriter;
  inbox: Inbox;
  gpu: SharedGpu;
  pacer: Pacer;
  log: Logger;
  /** Ends the process with `code` once stdout is flushed. */
  exit: (code: number) => Promise<never>;
  /** The hang fault: silence stdout and never return (the process stays alive). */
  hang: (reason: string) => Promise<never>;
  /** The load fault (faults.ts): hang after this many loading updates; null or absent, never. */
  loadHangsAfter?: number | null;
}

/** The model's prompt cache: off when the cap is 0 or the catalog gives no KV size (the hello says why). */
export function simPromptCache(model: CatalogModel, capBytes: number): SimPromptCache {
  return new SimPromptCache(model.kvCache ? capBytes : 0, model.kvCache ? kvBytesPerToken(model.kvCache) : 0);
}

/** The hello's `promptCache`: what the cache is, or why this model has none. */
export function promptCacheHello(model: CatalogModel, capBytes: number): { capBytes: number; supported: boolean; reason: string | null } {
  if (!model.kvCache) return { capBytes, supported: false, reason: `the catalog gives no KV cache size for ${model.id}` };
  return { capBytes, supported: true, reason: null };
}

export class SimRunner {
  private readonly state: RunnerState;
  private readonly engine: GenerationEngine;
  private readonly pacing: PrefillPacingState;

  constructor(private readonly deps: SimRunnerDeps) {
    this.state = new RunnerState(deps.out);
    this.pacing = new PrefillPacingState(deps.out, deps.inbox, deps.log);
    this.engine = new GenerationEngine({
      model: deps.model,
      timings: deps.model.sim,
      timeScale: deps.timeScale,
      out: deps.out,
      inbox: deps.inbox,
      state: this.state,
      gpu: deps.gpu,
      pacer: deps.pacer,
      pacing: this.pacing,
      schedule: deps.schedule,
      prefillChunkMs: deps.prefillChunkMs,
      cache: simPromptCache(deps.model, deps.promptCacheBytes),
      log: deps.log,
      crash: async (reason) => {
        deps.log.error({ reason }, 'crashing on purpose (fault prompt)');
        return deps.exit(1);
      },
      hang: deps.hang,
    });
  }

  /** Announces RunnerIdle, then serves stdin until Shutdown (the process exits then). */
  async serve(): Promise<never> {
    this.state.set({ kind: 'RunnerIdle' });
    for (;;) {
      const message = await this.deps.inbox.next();
      // Time spent waiting for input is not simulated work.
      this.deps.pacer.resync();
      if (message.kind === 'SetPrefillPacing') {
        // Not prefilling: acknowledged at once, used by the next prompt.
        this.pacing.apply(message, null);
        continue;
      }
      if (message.kind === 'CancelTask') {
        this.deps.log.warn({ taskId: message.cancelledTaskId }, 'dropped a cancel for a task that is not admitted');
        continue;
      }
      await this.handle(message);
    }
  }

  private async handle(task: Task): Promise<void> {
    switch (task.kind) {
      case 'LoadModel':
        if (this.state.kind !== 'RunnerIdle') return this.rejectLifecycle(task, 'the model is already loaded');
        return this.load(task.taskId);
      case 'StartWarmup':
        if (this.state.kind !== 'RunnerLoaded') return this.rejectLifecycle(task, 'warm-up needs a loaded, not yet warmed model');
        return this.warmUp(task.taskId);
      case 'TextGeneration':
        if (this.state.kind !== 'RunnerReady') return this.rejectGeneration(task);
        return this.generate(task);
      case 'Shutdown':
        return this.shutdown(task.taskId);
    }
  }

  private async load(taskId: string): Promise<void> {
    const { out, pacer, model, timeScale } = this.deps;
    out.acknowledged(taskId);
    out.taskStatus(taskId, 'Running');
    const totalLayers = model.sim.totalLayers;
    const updates = Math.min(LOADING_UPDATES, totalLayers);
    this.state.set({ kind: 'RunnerLoading', layersLoaded: 0, totalLayers });
    for (let i = 1; i <= updates; i++) {
      if (this.deps.loadHangsAfter != null && i > this.deps.loadHangsAfter) await this.deps.hang(`load fault: stuck after ${i - 1} loading updates`);
      // Reading weights from disk: not GPU compute.
      await pacer.wait((model.sim.loadS / updates) * timeScale * 1000);
      this.state.set({ kind: 'RunnerLoading', layersLoaded: Math.round((totalLayers * i) / updates), totalLayers });
    }
    this.state.set({ kind: 'RunnerLoaded' });
    out.taskStatus(taskId, 'Complete');
  }

  private async warmUp(taskId: string): Promise<void> {
    const { out, gpu, model, timeScale } = this.deps;
    out.acknowledged(taskId);
    out.taskStatus(taskId, 'Running');
    this.state.set({ kind: 'RunnerWarmingUp' });
    await gpu.compute(model.sim.warmupS * timeScale * 1000);
    gpu.idle();
    this.state.set({ kind: 'RunnerReady' });
    out.taskStatus(taskId, 'Complete');
  }

  private async generate(first: TextGenerationTask): Promise<void> {
    const shutdown = await this.engine.run(first);
    if (shutdown) await this.shutdown(shutdown.taskId);
  }

  private async shutdown(taskId: string): Promise<never> {
    const { out, gpu, log } = this.deps;
    out.acknowledged(taskId);
    out.taskStatus(taskId, 'Running');
    this.state.set({ kind: 'RunnerShuttingDown' });
    this.engine.failAll('runner shut down before the request finished');
    gpu.idle();
    out.taskStatus(taskId, 'Complete');
    this.state.set({ kind: 'RunnerShutdown' });
    log.info('shut down');
    return this.deps.exit(0);
  }

  private rejectLifecycle(task: Task, reason: string): void {
    this.deps.log.warn({ taskId: task.taskId, kind: task.kind, status: this.state.kind }, reason);
    this.deps.out.acknowledged(task.taskId);
    this.deps.out.taskStatus(task.taskId, 'Failed');
  }

  private rejectGeneration(task: TextGenerationTask): void {
    const errorMessage = `runner is not ready (status ${this.state.kind}): load and warm up the model first`;
    this.deps.log.warn({ taskId: task.taskId }, errorMessage);
    this.deps.out.acknowledged(task.taskId);
    this.deps.out.chunk(task.commandId, { kind: 'ErrorChunk', errorMessage });
    this.deps.out.taskStatus(task.taskId, 'Failed');
  }
}
