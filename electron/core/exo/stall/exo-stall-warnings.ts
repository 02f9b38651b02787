/**
 * Stall diagnosis from outside exo, for the requests exobar proxies:
 *
 * - `exo_dispatch_stall`: a request to a model has had no progress for a while although
 *   that model's runners are ready, while another model's request on the same Mac is
 *   prefilling. That is what stock exo's worker does when its one plan loop per Mac
 *   waits for a busy runner's acknowledgement (a runner mid-prefill acknowledges only
 *   after the prefill; exo PR 2348 removes the wait).
 * - `exo_runner_silent`: a runner with a request in flight has produced no progress
 *   and no token for longer than its own step time allows (exo has no such watchdog).
 *
 * Instance ids in the warnings are exo's instance ids.
 */
import { labelOf, nodeLabels } from '../cluster-events/node-labels';
import type { Warning } from '../../../../shared/snapshot';
import type { ExoReading } from '../attach/exo-client';
import type { ExoInstance } from '../attach/parse-exo-state';
import type { ExoTraffic, ProxiedRequest } from '../proxy/exo-traffic';
import { isServingStatus } from '../../../../shared/instance-state';
import { DEFAULT_PREFILL_CHUNK_TOKENS } from '../../../../shared/runner-protocol';

export interface StallThresholds {
  /** No progress this long after being sent, behind another model's prefill: a dispatch stall. Default 2 s. */
  dispatchStallMs: number;
  /** Never call a runner silent before this much silence. Default 30 s (one 4096-token chunk of a slow model on a shared GPU). */
  silentFloorMs: number;
  /** Silence allowed, in multiples of the step time seen so far. Default 5. */
  silentStepFactor: number;
}

export const DEFAULT_STALL_THRESHOLDS: StallThresholds = { dispatchStallMs: 2_000, silentFloorMs: 30_000, silentStepFactor: 5 };

export interface StallInput {
  traffic: ExoTraffic;
  reading: ExoReading;
  /** The hold setting: the warning says when it is off. */
  holdEnabled: boolean;
  now?: number;
  thresholds?: Partial<StallThresholds>;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

function nodeName(reading: ExoReading, nodeId: string): string {
  // With a short node id when two Macs share the name.
  return labelOf(nodeLabels(reading.nodes ?? []), nodeId);
}

function runnersReady(reading: ExoReading, instance: ExoInstance): boolean {
  return instance.shards.length > 0 && instance.shards.every((s) => isServingStatus(reading.runners?.get(s.runnerId)?.tag));
}

/** Both stall warnings for the current traffic and exo state. */
export function exoStallWarnings(input: StallInput): Warning[] {
  return [...dispatchStalls(input), ...silentRunners(input)];
}

function dispatchStalls(input: StallInput): Warning[] {
  const { traffic, reading } = input;
  const now = input.now ?? Date.now();
  const limits = { ...DEFAULT_STALL_THRESHOLDS, ...input.thresholds };
  const instances = [...(reading.instances?.values() ?? [])];
  const active = traffic.active();
  const found = new Map<string, { waiting: ProxiedRequest; waitMs: number; mine: ExoInstance; other: ExoInstance; nodeId: string }>();
  for (const waiting of active) {
    if (waiting.phase !== 'sent' || waiting.sentAt == null) continue;
    const waitMs = now - waiting.sentAt;
    if (waitMs < limits.dispatchStallMs) continue;
    for (const mine of instances.filter((i) => i.modelId === waiting.model && runnersReady(reading, i))) {
      for (const shard of mine.shards) {
        if (!shard.nodeId) continue;
        const other = instances.find(
          (i) =>
            i.modelId !== waiting.model &&
            i.shards.some((s) => s.nodeId === shard.nodeId) &&
            active.some((r) => r.model === i.modelId && r.phase === 'prefilling' && traffic.instanceOf(r) === i.instanceId),
        );
        if (!other) continue;
        const key = `${mine.instanceId}|${other.instanceId}|${shard.nodeId}`;
        if ((found.get(key)?.waitMs ?? -1) < waitMs) found.set(key, { waiting, waitMs, mine, other, nodeId: shard.nodeId });
      }
    }
  }
  return [...found.values()].map(({ waiting, waitMs, mine, other, nodeId }) => {
    const mac = nodeName(reading, nodeId);
    const unobserved = [...(reading.tasks?.values() ?? [])].filter(
      (t) =>
        t.kind === 'TextGeneration' &&
        t.instanceId === other.instanceId &&
        (t.status === 'Pending' || t.status === 'Running') &&
        !(t.commandId && traffic.isObserved(t.commandId)),
    ).length;
    const why =
      unobserved > 0
        ? ` exo holds ${unobserved} task${unobserved === 1 ? '' : 's'} for ${other.modelId} that exobar did not send: traffic that bypasses exobar can stall exo even with the hold on.`
        : input.holdEnabled
          ? ''
          : ' exobar’s hold is off, so exobar itself queued a request behind the prefill.';
    return {
      code: 'exo_dispatch_stall',
      instanceIds: [mine.instanceId, other.instanceId],
      title: `${waiting.model} has waited ${seconds(waitMs)} on ${mac} behind ${other.modelId}'s prefill`,
      risk:
        `exo's worker on ${mac} hands tasks to its runners one at a time and waits for each acknowledgement; ${other.modelId}'s runner is prefilling a prompt and acknowledges a request queued behind it only when that prefill ends, so no request to any other model on that Mac starts until then (the stall exo PR 2348 fixes).` +
        why,
      fix: `Run an exo with the fix from exo PR 2348 (its worker no longer waits for the acknowledgement). Meanwhile, do not queue requests behind long prompts on a shared Mac: send every client through exobar with the hold on, or place ${other.modelId} on another Mac.`,
    } satisfies Warning;
  });
}

function silentRunners(input: StallInput): Warning[] {
  const { traffic, reading } = input;
  const now = input.now ?? Date.now();
  const limits = { ...DEFAULT_STALL_THRESHOLDS, ...input.thresholds };
  const warnings = new Map<string, Warning>();
  for (const r of traffic.active()) {
    if (r.phase !== 'prefilling' && r.phase !== 'generating') continue;
    const last = Math.max(r.lastProgressAt ?? 0, r.lastTokenAt ?? 0);
    const step = stepMs(r);
    const allowed = Math.max(limits.silentFloorMs, step * limits.silentStepFactor);
    const silence = now - last;
    if (silence <= allowed) continue;
    const instanceId = traffic.instanceOf(r);
    const instance = instanceId ? reading.instances?.get(instanceId) : undefined;
    const mac = instance?.shards[0]?.nodeId ? nodeName(reading, instance.shards[0].nodeId) : 'its Mac';
    const key = instanceId ?? r.model;
    if (warnings.has(key)) continue;
    warnings.set(key, {
      code: 'exo_runner_silent',
      instanceIds: instanceId ? [instanceId] : [],
      title: `${r.model}'s runner on ${mac} has been silent for ${seconds(silence)} while ${r.phase === 'prefilling' ? 'prefilling' : 'generating'}`,
      risk: `No progress and no token for ${seconds(silence)}, against ${seconds(step)} per step so far. exo has no watchdog: a runner wedged on the GPU stays alive and its requests hang until their clients give up.`,
      fix: `If it stays silent, stop the model (exobar deletes its exo instance) and launch it again; with two models on one GPU, check that ring instances run with fast synch off.`,
    });
  }
  return [...warnings.values()];
}

/** The step time seen so far: per prefill chunk while prefilling, per token while generating. */
function stepMs(r: ProxiedRequest): number {
  if (r.phase === 'generating' && r.firstTokenAt != null && r.lastTokenAt != null && r.completionTokens > 1)
    return (r.lastTokenAt - r.firstTokenAt) / (r.completionTokens - 1);
  if (r.firstProgressAt != null && r.lastProgressAt != null && r.processedTokens > 0)
    return (r.lastProgressAt - r.firstProgressAt) / Math.max(1, Math.ceil(r.processedTokens / DEFAULT_PREFILL_CHUNK_TOKENS));
  return 0;
}
