/**
 * Folds what exobar measured of the requests it proxies into attach mode's view: each
 * exo instance shows its proxied requests like a local instance (phase, prefill
 * progress, TTFT in parts, tokens/s), exo's tasks that exobar did not send stay in its
 * queue marked not observed, and the stall warnings join the exo warnings under the
 * snapshot's exo instance ids.
 */
import type { Warning } from '../../../../shared/snapshot';
import type { ExoReading } from './exo-client';
import type { ExoView } from './exo-view';
import type { ExoTraffic } from '../proxy/exo-traffic';
import { exoStallWarnings, type StallThresholds } from '../stall/exo-stall-warnings';
import type { ExoSharing } from '../../sharing/exo-sharing';

export interface TrafficViewInput {
  traffic: ExoTraffic;
  /** The proxied traffic's sharing figures; without it the instances keep their empty ones. */
  sharing?: ExoSharing;
  reading: ExoReading;
  holdEnabled: boolean;
  stallThresholds?: Partial<StallThresholds>;
}

/** The view with the proxied traffic in its instances and the stall warnings in its warnings. */
export function withTraffic(view: ExoView, input: TrafficViewInput): Omit<ExoView, 'warnings'> & { warnings: Warning[] } {
  const { traffic } = input;
  const instances = view.instances.map((instance) => {
    const measured = traffic.instanceView(instance.exo.exoInstanceId);
    const tasks = instance.exo.tasks.map((t) => ({ ...t, observed: t.commandId !== null && traffic.isObserved(t.commandId) }));
    const observedIds = new Set(tasks.filter((t) => t.observed).map((t) => t.commandId));
    // A proxied request is shown once, as exobar measured it; exo's own row of it goes.
    const unobserved = instance.queue.requests.filter((r) => !observedIds.has(r.id));
    return {
      ...instance,
      queue: { ...instance.queue, requests: [...measured.requests, ...unobserved] },
      prefill: measured.prefill,
      ttft: measured.ttft,
      tokensPerSecond: measured.tokensPerSecond,
      sharing: input.sharing?.snapshot(instance.exo.exoInstanceId) ?? instance.sharing,
      exo: { ...instance.exo, tasks },
    };
  });
  const idOf = new Map(instances.map((i) => [i.exo.exoInstanceId, i.id]));
  // Neighbours are named by exobar's instance ids, as everywhere else in the snapshot.
  for (const instance of instances) {
    instance.sharing = {
      ...instance.sharing,
      neighbours: instance.sharing.neighbours.map((n) => ({ ...n, instanceId: idOf.get(n.instanceId) ?? n.instanceId })),
    };
  }
  const stalls: Warning[] = exoStallWarnings({ traffic, reading: input.reading, holdEnabled: input.holdEnabled, thresholds: input.stallThresholds })
    .map((w) => ({ ...w, instanceIds: w.instanceIds.map((id) => idOf.get(id)).filter((id): id is string => id !== undefined) }))
    // Without its instances on show (exo unreachable for a while) a stall has nothing to point at.
    .filter((w) => w.instanceIds.length > 0);
  return { ...view, instances, warnings: [...view.warnings, ...stalls] };
}
