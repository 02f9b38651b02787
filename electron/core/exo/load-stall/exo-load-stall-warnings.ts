/**
 * exo_load_stalled: an exo runner that stopped moving while loading (see
 * exo-load-stall-tracker.ts). It names the model, the Mac, the phase, the layers done and
 * how long nothing moved, and offers the way out: Stop (delete the instance) and Place
 * again (load-stall/place-stalled-again.ts). Only stalls past the threshold are said; a slow load that still moves is
 * exo_stuck_loading's, after its longer total time.
 */
import type { ExoNodeSnapshot } from '../../../../shared/exo-snapshot';
import type { ExoInstanceView, ExoWarning } from '../attach/exo-view';
import type { ExoLoadStallTracker } from './exo-load-stall-tracker';

const PHASE_WORDS: Record<string, string> = {
  RunnerIdle: 'waiting to start',
  RunnerConnecting: 'connecting to its peers',
  RunnerConnected: 'connected, not loading yet',
  RunnerLoading: 'loading',
  RunnerLoaded: 'loaded, not warming up yet',
  RunnerWarmingUp: 'warming up',
};

/** One warning per instance with a stalled runner, naming its longest-stalled one. */
export function loadStalledWarnings(instances: ExoInstanceView[], nodes: ExoNodeSnapshot[], stalls: ExoLoadStallTracker, now: number): ExoWarning[] {
  const warnings: ExoWarning[] = [];
  for (const instance of instances) {
    const [stall, ...more] = stalls.stallsOf(instance.exo.exoInstanceId);
    if (!stall) continue;
    const mac = nodes.find((n) => n.nodeId === stall.nodeId)?.label ?? (stall.nodeId ? `node ${stall.nodeId.slice(0, 8)}` : 'an unknown Mac');
    const layers = stall.layersLoaded !== null ? `, ${stall.layersLoaded} of ${stall.totalLayers ?? '?'} layers loaded` : '';
    const still = Math.round((now - stall.stillSince) / 1000);
    const speed = stall.measuredBytesPerS === null ? 'not measured yet' : `${(stall.measuredBytesPerS / 1e6).toFixed(0)} MB/s as measured`;
    warnings.push({
      code: 'exo_load_stalled',
      instanceIds: [instance.id],
      model: instance.model,
      title: `${instance.modelName} on ${mac} has not moved for ${still} s while ${PHASE_WORDS[stall.phase] ?? stall.phase}${layers}`,
      risk:
        `exo has no load timeout (removed in exo PR #1889): a runner can stay ${stall.phase} for ever (exo #1731, #1735, #1591), and requests for ${instance.modelName} wait with it` +
        `${instance.queue.requests.length > 0 ? ` (${instance.queue.requests.length} waiting)` : ''}. ` +
        `Threshold ${Math.round(stall.thresholdMs / 1000)} s, from the model's size and ${mac}'s load speed (${speed})` +
        `${more.length > 0 ? `; ${more.length} more of its runners stalled too` : ''}.`,
      fix: `Stop it (delete the instance: Stop in exobar, or DELETE /instance/${instance.exo.exoInstanceId} on exo) and place it again (Place again in exobar does both, as it was placed); if it stalls again, check disk, memory and the runner log on ${mac} (~/.exo/exo_log/runner_log/stderr.log).`,
    });
  }
  return warnings;
}
