/**
 * The exo view scenarios (the fake exo's snapshot builders): snapshots the real mapper
 * made from a fake exo over HTTP. Loaded by a path TypeScript does not follow: the fake
 * exo runs on Node (http, fs), which the page's typecheck has no types for.
 */
import type { Snapshot } from '../../../shared/snapshot';

export type ViewScenarioName = 'demo' | 'loading' | 'unreachable' | 'restarted';

/** The fake exo's entry module. */
const MODULE = '../../../test/support/fake-exo';

/** Attaches to a fake exo per scenario and returns the snapshots (a few hundred ms). */
export async function loadViewScenarios(): Promise<Record<ViewScenarioName, Snapshot>> {
  const mod = (await import(/* @vite-ignore */ MODULE)) as { viewScenarios(): Promise<Record<ViewScenarioName, Snapshot>> };
  return mod.viewScenarios();
}

/** A snapshot of the real core with requests proxied to a fake exo: one prefilling, one held by exobar, a TTFT sample (a few seconds). */
export async function loadProxiedScenario(): Promise<Snapshot> {
  const mod = (await import(/* @vite-ignore */ MODULE)) as { proxiedSnapshot(): Promise<Snapshot> };
  return mod.proxiedSnapshot();
}

/** A snapshot of exo's runner still generating a cancelled request (the real mapper's output). */
export async function loadGhostScenario(): Promise<Snapshot> {
  const mod = (await import(/* @vite-ignore */ MODULE)) as { ghostSnapshot(): Promise<Snapshot> };
  return mod.ghostSnapshot();
}

/** A snapshot with an ongoing and a failed model download on the Macs (the real mapper's output). */
export async function loadDownloadsScenario(): Promise<Snapshot> {
  const mod = (await import(/* @vite-ignore */ MODULE)) as { downloadsSnapshot(): Promise<Snapshot> };
  return mod.downloadsSnapshot();
}
