/**
 * The fit check of the safe pair on an exo cluster, per Mac: the shards exo's placement
 * puts on each Mac (the new instances only; a reused one holds its memory already)
 * against that Mac's available memory in exo's state, less the headroom. Placement
 * reserves nothing, so two models landing on one Mac are checked together. In the fit
 * check's shape (shared/fit-check.ts), so the popover and the menu offer the same
 * "launch anyway" as for this Mac's own pair. exo's model size is the weights; exo does
 * not publish the models' configs, so the KV cache is unknown and said so.
 */
import { DEFAULT_FIT_CONTEXT_TOKENS, type FitCheck } from '../../../../shared/fit-check';
import { fitSentence } from '../../../../shared/memory-words';
import { FIT_RISK } from '../../fit/check-fit';
import { labelOf, nodeLabels } from '../cluster-events/node-labels';
import type { ExoCluster } from './exo-cluster-api';

/** What the fit check needs of a placement preview (exo-safe-pair.ts). */
export interface PlacedShards {
  model: string;
  reused: boolean;
  nodes: Array<{ nodeId: string; memoryNeededBytes: number }>;
}

/** One Mac's side of the check. */
export interface ExoMacFit {
  nodeId: string;
  label: string;
  neededBytes: number;
  availableBytes: number;
  fits: boolean;
}

/** Each Mac the new shards land on, with what they need there against what it has. */
export function exoMacFits(placements: readonly PlacedShards[], cluster: ExoCluster, headroomBytes: number): ExoMacFit[] {
  const needed = new Map<string, number>();
  for (const p of placements.filter((x) => !x.reused)) for (const n of p.nodes) needed.set(n.nodeId, (needed.get(n.nodeId) ?? 0) + n.memoryNeededBytes);
  const labels = nodeLabels(cluster.nodes);
  return [...needed].map(([nodeId, neededBytes]) => {
    const availableBytes = cluster.nodes.get(nodeId)?.memoryAvailableBytes ?? 0;
    return { nodeId, label: labelOf(labels, nodeId), neededBytes, availableBytes, fits: neededBytes <= Math.max(0, availableBytes - headroomBytes) };
  });
}

/** "Not enough memory on studio-a: needs 4.3 GiB; 3.0 GiB free, of which 2.0 GiB is kept free for macOS and other apps: 1.0 GiB usable." */
export function exoMacProblem(mac: ExoMacFit, headroomBytes: number): string {
  return `Not enough memory on ${mac.label}: ${fitSentence({ neededBytes: mac.neededBytes, freeBytes: mac.availableBytes, headroomBytes })}.`;
}

/** The pair's check on the cluster, every Mac it lands on; null when it starts nothing new. */
export function exoPairFit(placements: readonly PlacedShards[], cluster: ExoCluster, headroomBytes: number): FitCheck | null {
  const macs = exoMacFits(placements, cluster, headroomBytes);
  if (macs.length === 0) return null;
  const fresh = placements.filter((p) => !p.reused);
  const models = fresh.map((p) => {
    const weightsBytes = p.nodes.reduce((sum, n) => sum + n.memoryNeededBytes, 0);
    return {
      model: p.model,
      weightsBytes,
      kvCacheBytes: null,
      contextTokens: DEFAULT_FIT_CONTEXT_TOKENS,
      neededBytes: weightsBytes,
      weightsSource: 'exo' as const,
    };
  });
  const problems = macs.filter((m) => !m.fits).map((m) => exoMacProblem(m, headroomBytes));
  const perMac = macs.map((m) => `${m.label} ${fitSentence({ neededBytes: m.neededBytes, freeBytes: m.availableBytes, headroomBytes })}`).join('; ');
  const fits = problems.length === 0;
  return {
    fits,
    models,
    neededBytes: macs.reduce((sum, m) => sum + m.neededBytes, 0),
    freeBytes: macs.reduce((sum, m) => sum + m.availableBytes, 0),
    headroomBytes,
    // exo does not publish a Mac's GPU wired limit.
    gpuLimitBytes: null,
    gpuInUseBytes: 0,
    summary: `${perMac} (KV cache unknown: exo's model sizes, weights only)`,
    problems,
    risk: fits ? null : FIT_RISK,
  };
}
