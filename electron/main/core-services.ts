/**
 * The core's services the app's actions use, bound to one running core: the safe
 * pair (plan and launch), the diagnostic bundle and the MLX runtime's setup. Kept behind an interface so the
 * glue's tests can give fakes; the implementations are electron/core's, the same the
 * CLI and the API use.
 */
import type { SafePairPlan, Settings } from '../../shared/api';
import type { ExoProcessControl } from '../../shared/exo-process-control';
import { writeDiagnosticBundle } from '../core/diagnostics';
import type { ExoBundleSource } from '../core/exo/attach/exo-attachment';
import { controlExoProcess, refusalOrUnderWay, type ExoProcessManager } from '../core/exo-process';
import { launchExoSafePair, planExoSafePair, type FastSynchOf } from '../core/exo/launch/exo-safe-pair';
import type { MlxRuntimeService } from '../core/mlx/mlx-runtime-service';
import type { ExobarNode } from '../core/node/node-types';
import { launchSafePair } from '../core/safe-pair/launch-safe-pair';
import type { ShowLaunch } from '../core/safe-pair/launch-section';
import { acknowledgingMemory, planSafePairForNode } from '../core/safe-pair/plan-for-node';
import type { LaunchSafePairOptions } from '../../shared/bridge-actions';

export interface CoreServices {
  planSafePair(): Promise<SafePairPlan>;
  /** Plans, then launches; rejects with the plan's blockers when it cannot run. */
  /** `acknowledgeMemory`: launch past a failed fit check (this Mac's, or each Mac's on exo); `acknowledgeRisk`: past exo's fast-synch gate. */
  launchSafePair(options?: LaunchSafePairOptions): Promise<void>;
  /** Writes the zip to `file`; resolves once it is complete on disk. */
  writeDiagnosticBundle(file: string): Promise<void>;
  /**
   * Starts "Set up MLX runtime" and returns at once (progress is in the snapshot's
   * `mlx.setup`, as with `POST /api/mlx/setup`); throws `mlx_unsupported` where MLX cannot run.
   */
  startMlxSetup(): void;
  /** Looks for the MLX runtime and the local models again. */
  refreshMlxRuntime(): Promise<void>;
  /**
   * Starts, stops or restarts this Mac's exo and returns once it is under way (as the
   * control API without `?wait=done`); rejects with `exo_restart_required` without consent.
   */
  controlExoProcess(request: ExoProcessControl): Promise<void>;
}

/** The MLX runtime service's part the app uses. */
export type MlxRuntimeControl = Pick<MlxRuntimeService, 'supported' | 'startSetup' | 'refresh'>;

export interface CoreServicesOptions {
  node: ExobarNode;
  /** The core's launch section: where the safe launch's progress goes, local or on exo. */
  showLaunch: ShowLaunch;
  dataDir: string;
  version: string;
  settings(): Settings;
  mlx: MlxRuntimeControl;
  /** The attached exo's material for the bundle's exo/ folder. */
  exo?: () => ExoBundleSource | null;
  /** This Mac's exo as exobar runs it: the popover's Start, Stop and Restart, and its log tails in the bundle. */
  exoProcess?: ExoProcessManager;
  /** The attached exo (its address and what exobar knows of its Macs' fast synch): the safe pair launches there while one is attached. */
  exoCluster?: { readonly url: string | null; fastSynchOf: FastSynchOf };
  /** Where a setup that failed to start is logged (its failures otherwise land in the snapshot). */
  log?: { warn(obj: object, msg: string): void };
}

export function createCoreServices(options: CoreServicesOptions): CoreServices {
  const { node, dataDir, version, mlx } = options;
  const onExo = () => {
    const url = options.exoCluster?.url;
    return url ? { url, settings: options.settings(), fastSynchOf: options.exoCluster!.fastSynchOf } : null;
  };
  const planSafePair = async (): Promise<SafePairPlan> => {
    const exo = onExo();
    return exo ? planExoSafePair(exo) : planSafePairForNode(node, options.settings());
  };
  return {
    planSafePair,
    async launchSafePair(launchOptions) {
      // Attached: on the cluster, the same launch as POST /api/launch/safe-pair (the fast-synch gate included).
      const exo = onExo();
      if (exo)
        await launchExoSafePair(exo, {
          acknowledgeRisk: launchOptions?.acknowledgeRisk === true,
          acknowledgeMemory: launchOptions?.acknowledgeMemory === true,
          onProgress: options.showLaunch,
        });
      else {
        const plan = await planSafePairForNode(node, options.settings());
        await launchSafePair(node, launchOptions?.acknowledgeMemory ? acknowledgingMemory(plan) : plan, { onProgress: options.showLaunch });
      }
    },
    async writeDiagnosticBundle(file) {
      await writeDiagnosticBundle({ node, exoProcess: options.exoProcess ?? null, dataDir, settings: options.settings(), version, exo: options.exo }, file);
    },
    startMlxSetup() {
      if (!mlx.supported) {
        // The same refusal as POST /api/mlx/setup: MLX needs Metal on Apple silicon.
        throw Object.assign(new Error('MLX runs only on macOS on Apple silicon; the sim engine serves the sim models here'), {
          code: 'mlx_unsupported',
        });
      }
      // Not awaited: the setup (a venv and a pip install) takes minutes; the popover follows
      // it through the snapshot. Its own failures are recorded there, not thrown.
      mlx.startSetup().catch((error: unknown) => options.log?.warn({ err: error }, 'MLX runtime setup failed'));
    },
    async refreshMlxRuntime() {
      await mlx.refresh();
    },
    async controlExoProcess(request) {
      const manager = options.exoProcess;
      if (!manager) throw Object.assign(new Error("This exobar does not run this Mac's exo"), { code: 'exo_process_unavailable' });
      const work = controlExoProcess({ manager, snapshot: () => node.snapshot(), defaultFastSynch: () => options.settings().defaultFastSynch }, request);
      // The outcome (running, crashed with exo's last lines) is in the snapshot; a late failure goes to the log.
      work.catch((error: unknown) => options.log?.warn({ err: error }, 'exo process action failed'));
      await refusalOrUnderWay(work);
    },
  };
}
