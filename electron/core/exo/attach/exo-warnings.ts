/**
 * Warnings across the exo cluster: two models on one Mac with fast synch on, a
 * failed runner, a node not seen for 30 s, an instance stuck loading, and exo itself
 * not answering. Each says what can happen and what to do.
 */
import type { ExoNodeSnapshot, ExoSection } from '../../../../shared/exo-snapshot';
import { GONE_STATUSES } from '../../../../shared/instance-state';
import { sharedGpuWarningCode } from '../../../../shared/fast-synch-policy';
import type { ExoTracker } from './exo-tracker';
import { LOADING_STATUSES, type ExoInstanceView, type ExoWarning, type ExoWarningOptions } from './exo-view';

/** Runners left out of the GPU count: the ones that no longer hold it, and one missing from exo's runner list. */
const GONE = new Set([...GONE_STATUSES, 'missing']);

// The label adds a short node id when two Macs share a name.
const nameOf = (node: Pick<ExoNodeSnapshot, 'label'> | undefined, nodeId: string) => node?.label ?? `node ${nodeId.slice(0, 8)}`;

/**
 * The shared-GPU warning, per Mac: two or more models (whatever their instance types)
 * with runners on it and fast synch on (or assumed on). Its code names the mix
 * (sharedGpuWarningCode): two_ring_fast_synch for ring models only.
 */
export function ringFastSynchWarnings(instances: ExoInstanceView[], nodes: ExoNodeSnapshot[]): ExoWarning[] {
  const warnings: ExoWarning[] = [];
  const byNode = new Map<string, ExoInstanceView[]>();
  for (const instance of instances) {
    for (const runner of instance.exo.runners) {
      if (GONE.has(runner.status)) continue;
      const list = byNode.get(runner.nodeId) ?? [];
      if (!list.includes(instance)) byNode.set(runner.nodeId, [...list, instance]);
    }
  }
  for (const [nodeId, sharing] of byNode) {
    if (sharing.length < 2) continue;
    const node = nodes.find((n) => n.nodeId === nodeId);
    const fastSynch = node?.fastSynch ?? { enabled: true, source: 'assumed' as const };
    if (fastSynch.enabled === false) continue;
    const assumed = fastSynch.source === 'assumed';
    const name = nameOf(node, nodeId);
    const code = sharedGpuWarningCode(sharing.map((i) => i.instanceType));
    const models = code === 'two_ring_fast_synch' ? `${sharing.length} ring models` : `${sharing.length} models`;
    warnings.push({
      code,
      instanceIds: sharing.map((i) => i.id),
      title: assumed
        ? `${models} share the GPU of ${name}, where fast synch is assumed on (exo's default; exobar cannot read it there)`
        : `${models} share the GPU of ${name} with fast synch on (read from exo's log)`,
      risk:
        `${sharing.map((i) => i.modelName).join(' and ')} run as separate MLX processes on one GPU. With MLX_METAL_FAST_SYNCH=1 the GPU wait can spin forever: ` +
        'throughput collapses, or the GPU stays wedged at 100% until the Mac is rebooted.',
      fix:
        `Restart exo on ${name} with fast synch off (EXO_FAST_SYNCH=false, or --no-fast-synch), then place the models again: ` +
        'exo applies the value per process, and a restart deletes every instance that spans that Mac.',
      ...(assumed ? { assumed: true } : {}),
    });
  }
  return warnings;
}

/** exo_runner_failed: one per instance with a failed runner, with exo's message and typed diagnostics. */
export function runnerFailedWarnings(instances: ExoInstanceView[]): ExoWarning[] {
  const warnings: ExoWarning[] = [];
  for (const instance of instances) {
    const failed = instance.exo.runners.filter((r) => r.status === 'RunnerFailed');
    if (failed.length === 0) continue;
    const where = failed.map((r) => r.nodeLabel).join(', ');
    const said = failed
      .map((r) => {
        const diagnostics = r.diagnostics.map((d) => `${d.kind}${d.message ? `: ${d.message}` : ''}`).join('; ');
        return `${r.nodeLabel} rank ${r.rank ?? '?'}: ${r.errorMessage ?? 'no message'}${diagnostics ? ` (${diagnostics})` : ''}`;
      })
      .join(' | ');
    const metal = failed.some((r) => r.diagnostics.some((d) => d.kind === 'RunnerMetalGpuTimeout'));
    warnings.push({
      code: 'exo_runner_failed',
      instanceIds: [instance.id],
      title: `${instance.modelName}: runner failed on ${where}`,
      risk: `exo says: ${said}. Requests for ${instance.modelName} queue behind the failure (${instance.queue.requests.length} waiting) until the instance is placed again.`,
      fix:
        `Delete the instance in exo and place it again. ${metal ? 'A Metal GPU timeout often follows two models spinning on one GPU: check fast synch on that Mac. ' : ''}` +
        "The runner's own output is in ~/.exo/exo_log/runner_log/stderr.log on that Mac.",
    });
  }
  return warnings;
}

/** exo_node_lost: a node whose lastSeen has not moved for `nodeLostMs` (exo's master drops it at 30 s). */
export function nodeLostWarnings(
  nodes: ExoNodeSnapshot[],
  instances: ExoInstanceView[],
  tracker: ExoTracker,
  now: number,
  options: ExoWarningOptions,
): ExoWarning[] {
  const freshest = Math.max(...nodes.map((n) => n.lastSeenAt ?? -Infinity));
  const warnings: ExoWarning[] = [];
  for (const node of nodes) {
    const movedAt = tracker.lastSeenMovedAt(node.nodeId);
    const stillFor = movedAt === null ? 0 : now - movedAt;
    // Two views, so a clock skew between Macs cannot raise it alone: exobar saw its
    // lastSeen stand still, or it lags the freshest node's by more than the limit.
    const behind = node.lastSeenAt !== null && Number.isFinite(freshest) ? freshest - node.lastSeenAt : 0;
    if (stillFor <= options.nodeLostMs && behind <= options.nodeLostMs) continue;
    const silentS = Math.round(Math.max(stillFor, behind) / 1000);
    const name = nameOf(node, node.nodeId);
    const affected = instances.filter((i) => i.exo.runners.some((r) => r.nodeId === node.nodeId));
    warnings.push({
      code: 'exo_node_lost',
      instanceIds: affected.map((i) => i.id),
      title: `${name} has not been seen for ${silentS} s`,
      risk:
        `exo's master drops a node unseen for 30 s and deletes every instance that spans it${affected.length ? ` (${affected.map((i) => i.modelName).join(', ')})` : ''}; ` +
        'requests to those models fail meanwhile.',
      fix: `Check that ${name} is awake, on the network and running exo. After exo restarts there, place its models again.`,
    });
  }
  return warnings;
}

/** exo_stuck_loading: an instance whose runners have been loading for longer than `stuckLoadingMs`. */
export function stuckLoadingWarnings(instances: ExoInstanceView[], tracker: ExoTracker, now: number, options: ExoWarningOptions): ExoWarning[] {
  const warnings: ExoWarning[] = [];
  for (const instance of instances) {
    const since = tracker.instanceLoadingSince(instance.exo.exoInstanceId);
    if (since === null || now - since <= options.stuckLoadingMs) continue;
    const loading = instance.exo.runners.filter((r) => LOADING_STATUSES.has(r.status));
    const detail = loading
      .map((r) => `${r.nodeLabel} ${r.status}${r.layersLoaded !== null ? ` ${r.layersLoaded}/${r.totalLayers ?? '?'} layers` : ''}`)
      .join(', ');
    warnings.push({
      code: 'exo_stuck_loading',
      instanceIds: [instance.id],
      title: `${instance.modelName} has been loading for ${Math.round((now - since) / 60_000)} min`,
      risk: `Its runners are not ready (${detail}); requests for it wait (${instance.queue.requests.length} waiting). exo has no stall detection for loading runners.`,
      fix: 'Delete the instance in exo and place it again; if it stalls again, check disk and memory on those Macs and the runner log (~/.exo/exo_log/runner_log/stderr.log).',
    });
  }
  return warnings;
}

/**
 * The words for an instance that has had no working runner on some Mac for longer than
 * `withoutRunnerMs` (exo keeps it registered: exo #2120, #1458), or null while it has one
 * everywhere or not for that long yet. One sentence for the warning and the proxy's 503.
 */
export function withoutRunnerWords(
  instance: ExoInstanceView,
  tracker: ExoTracker,
  now: number,
  options: Pick<ExoWarningOptions, 'withoutRunnerMs'>,
): { title: string; fix: string } | null {
  const since = tracker.instanceWithoutRunnerSince(instance.exo.exoInstanceId);
  if (since === null || now - since < options.withoutRunnerMs) return null;
  const gone = instance.exo.runners.filter((r) => r.status === 'missing' || GONE.has(r.status));
  const where = gone.map((r) => `${r.nodeLabel} (${r.status === 'missing' ? 'no runner' : r.status})`).join(', ');
  return {
    title: `${instance.modelName} is still registered in exo but has no working runner on ${where} (for ${Math.round((now - since) / 1000)} s)`,
    fix: `Delete the instance in exo (DELETE /instance/${instance.exo.exoInstanceId}, or Stop in exobar) and place the model again; exo does not remove it by itself.`,
  };
}

/**
 * exo_instance_without_runner: an instance exo keeps registered while its runner on some
 * Mac is gone. A runner that failed is exo_runner_failed's to say (with exo's message and
 * the same way out): one cause, one warning. Requests to either are still answered 503.
 */
export function instanceWithoutRunnerWarnings(instances: ExoInstanceView[], tracker: ExoTracker, now: number, options: ExoWarningOptions): ExoWarning[] {
  const warnings: ExoWarning[] = [];
  for (const instance of instances) {
    const gone = instance.exo.runners.filter((r) => r.status === 'missing' || GONE.has(r.status));
    if (gone.length > 0 && gone.every((r) => r.status === 'RunnerFailed')) continue;
    const words = withoutRunnerWords(instance, tracker, now, options);
    if (!words) continue;
    warnings.push({
      code: 'exo_instance_without_runner',
      instanceIds: [instance.id],
      title: words.title,
      risk: 'exo would accept requests for it and leave them hanging with no error; exobar answers them at once with 503 instead.',
      fix: words.fix,
    });
  }
  return warnings;
}

/** exo_unreachable: the attached node does not answer, or answers with something exobar cannot use. */
export function unreachableWarnings(section: ExoSection, instances: ExoInstanceView[], now: number): ExoWarning[] {
  if (section.connected || !section.lastError) return [];
  const forS = Math.round((now - section.since) / 1000);
  return [
    {
      code: 'exo_unreachable',
      instanceIds: instances.map((i) => i.id),
      title: `exo at ${section.url} is not answering (for ${forS} s)`,
      risk:
        `${section.lastError.message}. exo's models, queues and warnings are shown as last seen` +
        `${section.lastGoodPollAt === null ? ' (never)' : ''}; exobar keeps serving its local models and retries with backoff.`,
      fix: `Check that exo runs and listens at ${section.url} (GET /node_id answers with its node id); exobar reattaches by itself when it does.`,
    },
  ];
}
