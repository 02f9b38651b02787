/**
 * How the node starts a runner for a model: its command (the sim runner for sim models,
 * the MLX service's for MLX ones), its engine options, its watchdog limits and the
 * floor under which a load without progress is not yet a stall. Read from the node's
 * options and the runner settings at each use, so a settings change applies to the next runner.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { CatalogModel } from '../../../shared/catalog';
import { defaultSettings } from '../../../shared/api';
import { DEFAULT_FIT_CONTEXT_TOKENS } from '../../../shared/fit-check';
import type { RunnerEngineOptions } from '../../../shared/runner-protocol';
import { estimateModelMemory } from '../fit/model-memory';
import type { SpawnSpec } from '../supervisor/spawn-spec';
import { DEFAULT_WATCHDOG_LIMITS, type WatchdogLimits } from '../supervisor/watchdog';
import type { CreateInstanceOptions, NodeOptions } from './node-types';
import { simSpawnSpec } from './sim-spawn-spec';

/** The least watchdog floor a time-scaled sim runner gets, real ms. */
const SIM_MIN_FLOOR_MS = 1000;

/** How to start a runner for a model with its engine options; null when this machine has none for it. */
export type RunnerCommand = (model: CatalogModel, instanceId: string, engine: RunnerEngineOptions) => SpawnSpec | null;

export class RunnerOptions {
  readonly simTimeScale: number;
  readonly command: RunnerCommand;
  private readonly settings: NonNullable<NodeOptions['runnerSettings']>;

  constructor(
    private readonly options: NodeOptions,
    command?: RunnerCommand,
  ) {
    this.simTimeScale = options.simTimeScale ?? 1;
    const gpuDir = join(options.dataDir, 'sim-gpu');
    mkdirSync(gpuDir, { recursive: true });
    this.settings = options.runnerSettings ?? (() => defaultSettings().runner);
    this.command =
      command ??
      ((model, _id, engine) =>
        model.engine === 'sim'
          ? simSpawnSpec(model.id, this.simTimeScale, gpuDir, engine, this.settings().simProfile ?? null)
          : (options.mlxSpawnSpec?.(model, engine) ?? null));
  }

  /** The engine options of a new instance's runner: its own schedule or the setting's, the cache cap the fit counted. */
  async engineFor(model: CatalogModel, create: CreateInstanceOptions): Promise<RunnerEngineOptions> {
    const settings = this.settings();
    const promptCacheBytes =
      create.promptCacheBytes ?? (await estimateModelMemory(model, DEFAULT_FIT_CONTEXT_TOKENS, settings.promptCacheBytes)).promptCacheBytes ?? 0;
    return { schedule: create.schedule ?? settings.schedule, prefillChunkMs: settings.prefillChunkMs, promptCacheBytes };
  }

  /**
   * The settings' limits. A sim runner's floor shrinks with its time scale, as all its
   * durations do, but not below 1 s of real time: a busy machine's scheduling pauses do not scale.
   */
  watchdogFor(model: CatalogModel): WatchdogLimits {
    const limits = { ...DEFAULT_WATCHDOG_LIMITS, ...this.options.watchdog };
    if (model.engine !== 'sim') return limits;
    return { ...limits, floorMs: Math.min(limits.floorMs, Math.max(SIM_MIN_FLOOR_MS, limits.floorMs * this.simTimeScale)) };
  }

  /** The least time without progress that makes a load a stall (runner_load_stalled), read now; a sim runner's shrinks with its time scale, as the watchdog's does. */
  loadStallFloorMs(model: CatalogModel): number {
    const floorMs = (this.settings().loadStallSeconds ?? defaultSettings().runner.loadStallSeconds) * 1000;
    return model.engine === 'sim' ? Math.max(SIM_MIN_FLOOR_MS, floorMs * this.simTimeScale) : floorMs;
  }
}
