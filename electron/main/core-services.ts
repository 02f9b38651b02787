/**
 * The core's services the app's actions use, bound to one running core: the safe
 * pair (plan and launch) and the diagnostic bundle. Kept behind an interface so the
 * glue's tests can give fakes; the implementations are electron/core's, the same the
 * CLI and the API use.
 */
import type { SafePairPlan, Settings } from '../../shared/api';
import { writeDiagnosticBundle } from '../core/diagnostics';
import type { ExobarNode } from '../core/node-types';
import { launchSafePair } from '../core/safe-pair/launch-safe-pair';
import { planSafePairForNode } from '../core/safe-pair/plan-for-node';

export interface CoreServices {
  planSafePair(): Promise<SafePairPlan>;
  /** Plans, then launches; rejects with the plan's blockers when it cannot run. */
  launchSafePair(): Promise<void>;
  /** Writes the zip to `file`; resolves once it is complete on disk. */
  writeDiagnosticBundle(file: string): Promise<void>;
}

export interface CoreServicesOptions {
  node: ExobarNode;
  dataDir: string;
  version: string;
  settings(): Settings;
}

export function createCoreServices(options: CoreServicesOptions): CoreServices {
  const { node, dataDir, version } = options;
  const planSafePair = () => planSafePairForNode(node, options.settings());
  return {
    planSafePair,
    async launchSafePair() {
      await launchSafePair(node, await planSafePair());
    },
    async writeDiagnosticBundle(file) {
      await writeDiagnosticBundle({ node, dataDir, settings: options.settings(), version }, file);
    },
  };
}
