/**
 * The MLX engine as the running core sees it: whether a Python with mlx-lm is there,
 * which local models it can serve, how to spawn a runner for one, and the "Set up MLX
 * runtime" action with its progress. Its state is the snapshot's `mlx` section (registered
 * with the hub), its models the node's catalog beyond the sim models (`localModels`).
 */
import type { Settings } from '../../../shared/api';
import type { CatalogModel } from '../../../shared/catalog';
import type { MlxRuntimeSnapshot } from '../../../shared/snapshot';
import type { Registration, SnapshotSections } from '../app-state/snapshot-hub';
import type { RunnerEngineOptions } from '../../../shared/runner-protocol';
import type { SpawnSpec } from '../supervisor/spawn-spec';
import { detectMlxRuntime, type MlxRuntimeStatus } from './detect-mlx-runtime';
import { mlxPlatform } from './mlx-platform';
import { mlxRunnerCommand } from './mlx-runner-command';
import { MLX_MODEL_ID_PREFIX, scanLocalModels, type LocalMlxModel } from './scan-local-models';
import { MlxSetupError, setupMlxRuntime, type MlxSetupProgress } from './setup-mlx-runtime';

const OUTPUT_TAIL_LINES = 12;

export interface MlxRuntimeServiceOptions {
  dataDir: string;
  getSettings: () => Settings;
  /** Replaceable for tests: detection, the model scan and the setup. */
  detect?: typeof detectMlxRuntime;
  scan?: () => Promise<LocalMlxModel[]>;
  setup?: typeof setupMlxRuntime;
  platform?: NodeJS.Platform;
  arch?: string;
  /** The runner's engine: `mlx` for real models; `test` (deterministic, stdlib only) in tests. */
  runnerEngine?: 'mlx' | 'test';
  /** The test engine's time scale. */
  testTimeScale?: number;
}

export class MlxRuntimeService {
  private status: MlxRuntimeStatus | null = null;
  private models: LocalMlxModel[] = [];
  private setupState: MlxRuntimeSnapshot['setup'] = null;
  private setupRun: Promise<void> | null = null;
  private refreshing: Promise<void> | null = null;
  /** The state last published: what the snapshot shows between two publications. */
  private published: MlxRuntimeSnapshot | null = null;
  private section: Registration | null = null;

  constructor(private readonly options: MlxRuntimeServiceOptions) {}

  /** Where MLX can run at all: macOS on Apple silicon (Metal), Linux (CPU). */
  get supported(): boolean {
    return mlxPlatform(this.options.platform ?? process.platform, this.options.arch ?? process.arch).supported;
  }

  /** Registers the service's section (`mlx`) with the hub the snapshot is built by. */
  attach(hub: SnapshotSections): void {
    this.section = hub.section('mlx', () => ({ mlx: this.published }));
    this.publish();
  }

  /** The local models the runtime can serve (none while it is missing): the node's catalog beyond the sim models. */
  get localModels(): readonly LocalMlxModel[] {
    return this.models;
  }

  /**
   * Looks for the runtime and the local models again. A call while a look is under way
   * joins it: the core's start and a command that needs the answer (`exobar check
   * sharing`) then share one probe of the interpreter, which takes seconds.
   */
  refresh(): Promise<MlxRuntimeSnapshot> {
    if (!this.refreshing) {
      this.refreshing = this.lookAgain().finally(() => {
        this.refreshing = null;
      });
      this.publish(); // checking: the page says so instead of "unavailable, not checked yet"
    }
    // Published once the look is over, whatever it ended in: "checking" is then false.
    return this.refreshing.then(
      () => this.publish(),
      (error: unknown) => {
        this.publish();
        throw error;
      },
    );
  }

  private async lookAgain(): Promise<void> {
    const detect = this.options.detect ?? detectMlxRuntime;
    this.status = await detect({ dataDir: this.options.dataDir, settingsPython: this.options.getSettings().mlxPython });
    this.models = this.status.available ? await (this.options.scan ?? (() => scanLocalModels()))() : [];
  }

  /**
   * Starts "Set up MLX runtime" in the background (a venv with mlx-lm in the data
   * directory); progress shows in the snapshot. A second call while it runs joins it.
   */
  startSetup(): Promise<void> {
    this.setupRun ??= this.runSetup().finally(() => {
      this.setupRun = null;
    });
    return this.setupRun;
  }

  /**
   * Why an `mlx/` model is not in the catalog: the runtime is missing (with the probe's
   * reason) or it found no such model. Null for other ids, which are not this service's.
   */
  whyModelAbsent(id: string): string | null {
    if (!id.startsWith(MLX_MODEL_ID_PREFIX)) return null;
    if (!this.status) return 'the MLX runtime has not been looked for yet';
    if (!this.status.available) return `MLX models need the MLX runtime, which is not available: ${this.status.reason}`;
    return `the MLX runtime found ${this.models.length} local model${this.models.length === 1 ? '' : 's'} and not this one`;
  }

  /** The spawn spec of a runner for an MLX model; null when the runtime is missing. */
  spawnSpec(model: CatalogModel, engineOptions?: RunnerEngineOptions): SpawnSpec | null {
    if (model.engine !== 'mlx' || !model.path || !this.status?.available || !this.status.python) return null;
    // fastSynch null: the node sets the policy's variables over this spec before spawning.
    const engine = this.options.runnerEngine ?? 'mlx';
    const command = mlxRunnerCommand({
      python: this.status.python,
      model: model.path,
      fastSynch: null,
      baseEnv: {},
      engine,
      ...(engineOptions ? { engineOptions } : {}),
      ...(engine === 'test' && this.options.testTimeScale !== undefined ? { timeScale: this.options.testTimeScale } : {}),
    });
    const env = Object.fromEntries(Object.entries(command.env).filter((e): e is [string, string] => e[1] !== undefined));
    return { command: command.command, args: command.args, env };
  }

  snapshot(): MlxRuntimeSnapshot {
    return {
      available: this.status?.available ?? false,
      supported: this.supported,
      python: this.status?.python ?? null,
      version: this.status?.version ?? null,
      mlxVersion: this.status?.mlxVersion ?? null,
      reason: this.status?.reason ?? 'not checked yet',
      localModels: this.models.length,
      checking: this.refreshing !== null,
      setup: this.setupState,
    };
  }

  private async runSetup(): Promise<void> {
    const outputTail: string[] = [];
    const update = (progress: MlxSetupProgress) => {
      if (progress.line) {
        outputTail.push(progress.line);
        if (outputTail.length > OUTPUT_TAIL_LINES) outputTail.shift();
      }
      this.setupState = { state: 'running', step: progress.step, message: progress.message, outputTail: [...outputTail], error: null };
      this.publish();
    };
    this.setupState = { state: 'running', step: 'check-platform', message: 'Starting', outputTail: [], error: null };
    this.publish();
    try {
      await (this.options.setup ?? setupMlxRuntime)({
        dataDir: this.options.dataDir,
        basePython: this.options.getSettings().mlxPython,
        onProgress: update,
        platform: this.options.platform,
        arch: this.options.arch,
      });
      // A look begun before the venv existed would answer "missing": wait it out, then look again.
      await this.refreshing?.catch(() => undefined);
      await this.refresh();
      this.setupState = { state: 'done', step: 'done', message: 'MLX runtime ready', outputTail: [...outputTail], error: null };
    } catch (error) {
      const tail = error instanceof MlxSetupError && error.outputTail.length > 0 ? error.outputTail : outputTail;
      const step = error instanceof MlxSetupError ? error.step : (this.setupState?.step ?? 'check-platform');
      this.setupState = { state: 'failed', step, message: 'Setup failed', outputTail: tail.slice(-OUTPUT_TAIL_LINES), error: (error as Error).message };
    }
    this.publish();
  }

  private publish(): MlxRuntimeSnapshot {
    const state = this.snapshot();
    this.published = state;
    this.section?.changed();
    return state;
  }
}
