/**
 * runner_load_stalled: one of this Mac's runners stopped moving while loading (see
 * runner-load-stall.ts). It names the model, the phase, the layers loaded and how long
 * nothing moved, says the threshold and what it was made of, and offers the way out:
 * Stop (the instance's own Stop), then launch it again.
 */
import { formatMemory } from '../../../../shared/memory-words';
import type { Warning } from '../../../../shared/snapshot';
import type { RunnerLoadStall } from './runner-load-stall';

/** What the words need of a stalled runner's instance. */
export interface StalledInstance {
  id: string;
  modelId: string;
  modelName: string;
  sizeBytes: number;
  /** Requests waiting for it. */
  waiting: number;
}

function phaseWords(stall: RunnerLoadStall): string {
  if (stall.state === 'starting') return 'starting (no hello from its process yet)';
  if (stall.state === 'warming_up') return 'warming up';
  return 'loading';
}

/** One warning per stalled runner. */
export function runnerLoadStalledWarnings(stalls: readonly RunnerLoadStall[], instanceOf: (id: string) => StalledInstance | null, now: number): Warning[] {
  const warnings: Warning[] = [];
  for (const stall of stalls) {
    const instance = instanceOf(stall.instanceId);
    if (!instance) continue;
    const layers = stall.layersLoaded !== null ? `, ${stall.layersLoaded} of ${stall.totalLayers ?? '?'} layers loaded` : '';
    const still = Math.round((now - stall.stillSince) / 1000);
    const speed = stall.measuredBytesPerS === null ? 'not measured yet' : `${(stall.measuredBytesPerS / 1e6).toFixed(0)} MB/s as measured`;
    warnings.push({
      code: 'runner_load_stalled',
      instanceIds: [instance.id],
      model: instance.modelId,
      title: `${instance.modelName} has not moved for ${still} s while ${phaseWords(stall)}${layers}`,
      risk:
        `A load has no timeout of its own: a runner reading weights from a slow or failing disk, or on a Mac short of memory, can stay ${stall.status} for minutes, ` +
        `and requests for ${instance.modelName} wait with it${instance.waiting > 0 ? ` (${instance.waiting} waiting)` : ''}. ` +
        `Threshold ${Math.round(stall.thresholdMs / 1000)} s, from the model's size (${formatMemory(instance.sizeBytes)}) and this Mac's load speed (${speed}).`,
      fix: `Stop it (Stop in exobar, or DELETE /api/instances/${instance.id}) and launch it again; if it stalls again, check the disk the model is read from, free memory and the runner's log (Logs).`,
    });
  }
  return warnings;
}
