/**
 * The one-click safe launch on an attached exo cluster: the safe pair (two models)
 * placed by exo's own placement, one at a time, each waited for until every runner is
 * RunnerReady in `/state/runners` (exo's `/instance/await` answers "ready" as soon as
 * the instance exists, before its runners load). exobar never re-implements placement.
 *
 * - plan: per model `GET /instance/placement` (ring, pipeline, min_nodes 1); where each
 *   lands and the memory it needs against each Mac's available memory; a model already
 *   placed is reused. Placement reserves nothing, so both models landing on one Mac are
 *   checked together.
 * - launch: re-reads memory and placement before each model (the first one's weights
 *   now take memory), `POST /instance`, waits for the runners; a failed runner or a
 *   timeout deletes the instance it created and says why in words.
 * - two ring instances on one Mac with fast synch on (or assumed on: exo does not
 *   publish it) answer 409 `fast_synch_shared_gpu` unless `acknowledgeRisk` is set.
 *
 * Answers keep the shapes of the local safe launch (shared/api.ts SafePairPlan), with
 * the cluster's detail under `exo`.
 */
import type { SafePairPlan, SafePairPlanEntry, Settings } from '../../../../shared/api';
import { defaultSettings } from '../../../../shared/api';
import type { LaunchProgress } from '../../../../shared/snapshot';
import { DEFAULT_HEADROOM_BYTES } from '../../../../shared/safe-pair-plan';
import { formatMemory } from '../../../../shared/memory-words';
import { NodeError } from '../../node/node-types';
import { fitRefusal } from '../../fit/fit-gate';
import { acknowledgingMemory } from '../../safe-pair/plan-for-node';
import { exoPairFit } from './exo-pair-fit';
import { labelOf, nodeLabels } from '../cluster-events/node-labels';
import { downloadedModels, exoCall, placeRing, readCluster, type ExoCluster, type ExoModelEntry } from './exo-cluster-api';
import { isServingStatus, runnersLifecycle } from '../../../../shared/instance-state';

/** A Mac's fast-synch value as exobar knows it: exo's log on this Mac, or exo's default (on), assumed. */
export type FastSynchOf = (nodeId: string) => { enabled: boolean; assumed: boolean };

export interface ExoSafePairOptions {
  url: string;
  settings: Settings;
  /** Default: on, assumed, for every Mac. */
  fastSynchOf?: FastSynchOf;
  headroomBytes?: number;
}

export interface ExoPlacementNode {
  nodeId: string;
  name: string | null;
  /** What this model's shard needs there. */
  memoryNeededBytes: number;
  memoryAvailableBytes: number | null;
}

export interface ExoPlacementPreview {
  model: string;
  /** The instance reused, or null for a new one. */
  instanceId: string | null;
  reused: boolean;
  nodes: ExoPlacementNode[];
  /** exo's placement refusal in words, or null. */
  error: string | null;
}

export interface ExoSafePairPlan extends SafePairPlan {
  exo: {
    url: string;
    placements: ExoPlacementPreview[];
    /** Both ring instances on one Mac with fast synch on: the launch needs acknowledgeRisk. */
    fastSynchRisk: { message: string; assumed: boolean } | null;
  };
}

const defaultFastSynch: FastSynchOf = () => ({ enabled: true, assumed: true });

/**
 * The pair: the settings' models, or while the settings hold their built-in default,
 * the two smallest downloaded text models that fit on the Mac with the most memory.
 */
export function pickExoPair(settings: Settings, downloaded: ExoModelEntry[], largestAvailableBytes: number): [string, string] | null {
  const builtIn = defaultSettings().safePair;
  if (settings.safePair.small !== builtIn.small || settings.safePair.medium !== builtIn.medium) return [settings.safePair.small, settings.safePair.medium];
  const fitting = downloaded
    .filter((m) => m.isText && m.storageBytes > 0 && m.storageBytes <= largestAvailableBytes)
    .sort((a, b) => a.storageBytes - b.storageBytes);
  return fitting.length >= 2 ? [fitting[0]!.id, fitting[1]!.id] : null;
}

/** Plans the pair on the cluster now, nothing done. */
export async function planExoSafePair(options: ExoSafePairOptions): Promise<ExoSafePairPlan> {
  const headroom = options.headroomBytes ?? DEFAULT_HEADROOM_BYTES;
  const fastSynchOf = options.fastSynchOf ?? defaultFastSynch;
  const [cluster, downloaded] = await Promise.all([readCluster(options.url), downloadedModels(options.url).catch(() => [] as ExoModelEntry[])]);
  const available = [...cluster.nodes.values()].map((n) => n.memoryAvailableBytes ?? 0);
  const pair = pickExoPair(options.settings, downloaded, Math.max(0, ...available));
  const blockers: string[] = [];
  if (!pair) blockers.push('exo has fewer than two downloaded text models that fit on one Mac: download two, or set safePair in settings.');
  else if (pair[0] === pair[1]) blockers.push(`The safe pair needs two different models, but both are "${pair[0]}": change safePair in settings.`);
  const placements: ExoPlacementPreview[] = [];
  for (const model of pair ? [...new Set(pair)] : []) placements.push(await preview(options.url, cluster, model, sizeOf(downloaded, model)));
  for (const p of placements) if (p.error) blockers.push(`exo cannot place ${p.model}: ${p.error}`);
  // Placement reserves nothing: new models landing on one Mac must fit there together.
  // The check's problems block the plan unless the launch acknowledges them (acknowledgeMemory).
  const fit = exoPairFit(placements, cluster, headroom);
  if (fit && !fit.fits) blockers.push(...fit.problems);
  const risk = fastSynchRisk(placements, cluster, fastSynchOf);
  const models: SafePairPlanEntry[] = placements.map((p) => {
    const fs = p.nodes.map((n) => fastSynchOf(n.nodeId));
    const on = fs.some((f) => f.enabled);
    return {
      model: p.model,
      modelName: p.model.split('/').pop() ?? p.model,
      engine: 'mlx',
      simulated: false,
      instanceType: 'ring',
      fastSynch: on,
      fastSynchReason: fs.some((f) => f.assumed)
        ? `exo's default (${on ? 'on' : 'off'}), assumed: exo does not publish it`
        : `read from exo's log: ${on ? 'on' : 'off'}`,
      memoryBytes: p.nodes.reduce((sum, n) => sum + n.memoryNeededBytes, 0),
      alreadyRunning: p.reused,
      state: p.reused ? reusedLifecycle(cluster, p.instanceId) : null,
    };
  });
  const requiredBytes = models.filter((m) => !m.alreadyRunning).reduce((sum, m) => sum + m.memoryBytes, 0);
  const byMac = freeByMac(cluster, placements);
  return {
    models,
    memory: { requiredBytes, freeBytes: byMac.reduce((sum, m) => sum + m.freeBytes, 0), headroomBytes: headroom, byMac },
    blockers,
    canRun: blockers.length === 0,
    fit,
    exo: { url: options.url, placements, fastSynchRisk: risk },
  };
}

/**
 * Free memory per Mac from exo's state: the Macs the pair's models use or would use,
 * placed already or not (so a plan with nothing more to load still says what is free),
 * or every Mac of the cluster when no placement names one.
 */
function freeByMac(cluster: ExoCluster, placements: ExoPlacementPreview[]): NonNullable<ExoSafePairPlan['memory']['byMac']> {
  const used = new Set(placements.flatMap((p) => p.nodes.map((n) => n.nodeId)));
  const ids = used.size > 0 ? [...used] : [...cluster.nodes.keys()];
  const labels = nodeLabels(cluster.nodes);
  return ids.map((nodeId) => ({ nodeId, label: labelOf(labels, nodeId), freeBytes: cluster.nodes.get(nodeId)?.memoryAvailableBytes ?? 0 }));
}

function sizeOf(downloaded: ExoModelEntry[], model: string): number | null {
  return downloaded.find((m) => m.id === model)?.storageBytes ?? null;
}

async function preview(url: string, cluster: ExoCluster, model: string, size: number | null): Promise<ExoPlacementPreview> {
  const existing = [...cluster.instances.values()].find((i) => i.modelId === model && i.instanceType === 'ring');
  const nodesOf = (shards: Array<{ nodeId: string | null }>, bytes: number): ExoPlacementNode[] =>
    shards
      .filter((s): s is { nodeId: string } => s.nodeId !== null)
      .map((s) => ({
        nodeId: s.nodeId,
        name: cluster.nodes.get(s.nodeId)?.name ?? null,
        memoryNeededBytes: bytes / shards.length,
        memoryAvailableBytes: cluster.nodes.get(s.nodeId)?.memoryAvailableBytes ?? null,
      }));
  if (existing) return { model, instanceId: existing.instanceId, reused: true, nodes: nodesOf(existing.shards, size ?? 0), error: null };
  const placed = await placeRing(url, model);
  if (!placed.ok) return { model, instanceId: null, reused: false, nodes: [], error: placed.reason };
  return { model, instanceId: null, reused: false, nodes: nodesOf(placed.instance.shards, size ?? placed.storageBytes ?? 0), error: null };
}

function fastSynchRisk(placements: ExoPlacementPreview[], cluster: ExoCluster, fastSynchOf: FastSynchOf): ExoSafePairPlan['exo']['fastSynchRisk'] {
  if (placements.length < 2) return null;
  const [a, b] = placements as [ExoPlacementPreview, ExoPlacementPreview];
  const shared = a.nodes.map((n) => n.nodeId).filter((id) => b.nodes.some((m) => m.nodeId === id));
  const on = shared.filter((id) => fastSynchOf(id).enabled);
  if (on.length === 0) return null;
  const assumed = on.some((id) => fastSynchOf(id).assumed);
  const names = on.map((id) => cluster.nodes.get(id)?.name ?? id).join(', ');
  return {
    assumed,
    message: `${a.model} and ${b.model} would both be ring instances on ${names} with fast synch ${assumed ? 'on (assumed: exo does not publish it, its default is on)' : 'on'}: two MLX processes spinning on one GPU can collapse throughput or wedge the GPU. Start exo there with EXO_FAST_SYNCH=false, or launch anyway with acknowledgeRisk.`,
  };
}

export interface ExoLaunchOptions {
  acknowledgeRisk?: boolean;
  /** Launch past the per-Mac fit check (its problems no longer block, nor the re-check before each model). */
  acknowledgeMemory?: boolean;
  /** Deadline for each instance's runners to be RunnerReady (default 10 min). */
  readyTimeoutMs?: number;
  pollMs?: number;
  onProgress?: (progress: LaunchProgress) => void;
}

export interface ExoLaunchResult {
  instances: Array<{ model: string; instanceId: string; reused: boolean }>;
  launch: LaunchProgress;
}

/**
 * Launches the plan's models one at a time. Idempotent: a placed model is reused and
 * waited for. Refuses a plan with blockers (409 launch_failed) and the fast-synch risk
 * without `acknowledgeRisk` (409 fast_synch_shared_gpu). A failure deletes the instance
 * this launch created and rejects with launch_failed, the reason in words.
 */
export async function launchExoSafePair(options: ExoSafePairOptions, launch: ExoLaunchOptions = {}): Promise<ExoLaunchResult> {
  const planned = await planExoSafePair(options);
  const plan = launch.acknowledgeMemory ? acknowledgingMemory(planned) : planned;
  if (!plan.canRun) {
    const memoryOnly = planned.fit && !planned.fit.fits && acknowledgingMemory(planned).canRun;
    // Only the fit check blocks: the same refusal as this Mac's launch (409 insufficient_memory, the figures in `fit`).
    if (memoryOnly) throw fitRefusal(planned.fit!, 'The safe pair on exo');
    throw new NodeError('launch_failed', `The safe pair cannot run on exo: ${plan.blockers.join(' ')}`, 409);
  }
  // Only a launch that creates an instance can create the hazard; reusing both changes nothing.
  const creates = plan.exo.placements.some((p) => !p.reused);
  if (plan.exo.fastSynchRisk && creates && !launch.acknowledgeRisk) throw new NodeError('fast_synch_shared_gpu', plan.exo.fastSynchRisk.message, 409);
  const models = plan.models.map((m) => m.model);
  const progress: LaunchProgress = { state: 'running', step: 'Starting the safe pair on exo', models, current: 0, error: null, startedAt: Date.now() };
  const report = (change: Partial<LaunchProgress>) => {
    Object.assign(progress, change);
    launch.onProgress?.({ ...progress, models: [...models] });
  };
  report({});
  const result: ExoLaunchResult = { instances: [], launch: progress };
  for (const [index, model] of models.entries()) {
    report({ current: index, step: `Placing ${model} on exo` });
    let created: string | null = null;
    try {
      // Read again: the first model's weights now take memory, and placement reserves nothing.
      const cluster = await readCluster(options.url);
      const existing = [...cluster.instances.values()].find((i) => i.modelId === model && i.instanceType === 'ring');
      let instanceId = existing?.instanceId ?? null;
      if (!instanceId) {
        const placed = await placeRing(options.url, model);
        if (!placed.ok) throw new Error(`exo cannot place ${model}: ${placed.reason}`);
        const need = plan.models[index]!.memoryBytes / Math.max(1, placed.instance.shards.length);
        for (const shard of placed.instance.shards) {
          const facts = shard.nodeId ? cluster.nodes.get(shard.nodeId) : undefined;
          const free = (facts?.memoryAvailableBytes ?? 0) - (options.headroomBytes ?? DEFAULT_HEADROOM_BYTES);
          // Launched anyway: the operator took the memory risk, the re-check does not take it back.
          if (need > free && !launch.acknowledgeMemory)
            throw new Error(
              `${facts?.name ?? shard.nodeId} now has ${formatMemory(facts?.memoryAvailableBytes ?? 0)} available, too little for ${model} (${formatMemory(need)} plus headroom)`,
            );
        }
        const answer = await exoCall(options.url, 'POST', '/instance', { instance: placed.tagged });
        if (answer.status !== 200) throw new Error(`exo refused to create the instance of ${model}: ${answer.message}`);
        instanceId = placed.instance.instanceId;
        created = instanceId;
      }
      report({ step: `Loading ${model} on exo` });
      await waitForRunners(options.url, instanceId, model, launch);
      result.instances.push({ model, instanceId, reused: created === null });
    } catch (error) {
      let message = `Safe pair launch on exo failed at ${model}: ${(error as Error).message}`;
      if (created) {
        const deleted = await exoCall(options.url, 'DELETE', `/instance/${encodeURIComponent(created)}`).catch((e: unknown) => ({
          status: 0,
          message: (e as Error).message,
        }));
        if (deleted.status !== 200) message += ` (deleting its instance also failed: ${deleted.message})`;
      }
      report({ state: 'failed', step: `Failed at ${model}`, error: message });
      throw new NodeError('launch_failed', message, 503);
    }
  }
  report({
    state: 'done',
    current: Math.max(0, models.length - 1),
    step: result.instances.every((i) => i.reused) ? `Already running on exo: ${models.join(' and ')}` : `Ready on exo: ${models.join(' and ')}`,
  });
  return result;
}

/** Waits until every runner of the instance is RunnerReady; a failed runner or the deadline throws in words. */
export async function waitForRunners(
  url: string,
  instanceId: string,
  model: string,
  launch: Pick<ExoLaunchOptions, 'readyTimeoutMs' | 'pollMs'>,
): Promise<void> {
  const started = Date.now();
  const deadline = started + (launch.readyTimeoutMs ?? 600_000);
  for (;;) {
    const cluster = await readCluster(url);
    const instance = cluster.instances.get(instanceId) ?? [...cluster.instances.values()].find((i) => i.instanceId === instanceId);
    if (instance) {
      const statuses = instance.shards.map((s) => cluster.runners.get(s.runnerId));
      const failed = statuses.find((s) => s?.tag === 'RunnerFailed');
      if (failed) throw new Error(`a runner of ${model} failed while loading: ${failed.errorMessage ?? 'no message'}`);
      if (statuses.length > 0 && statuses.every((s) => isServingStatus(s?.tag))) return;
    } else if (Date.now() - started > 5_000) {
      // exo's state applies the create within moments; an instance still absent was dropped.
      throw new Error(`exo dropped the instance of ${model} (the master deletes instances it cannot place or whose runners keep failing)`);
    }
    if (Date.now() > deadline) throw new Error(`${model}'s runners did not become ready within ${Math.round((launch.readyTimeoutMs ?? 600_000) / 1000)} s`);
    await new Promise((r) => setTimeout(r, launch.pollMs ?? 200));
  }
}

/** Stopping a model on exo deletes its exo instances. Returns the deleted instance ids. */
export async function stopExoModel(url: string, model: string): Promise<string[]> {
  const cluster = await readCluster(url);
  const ids = [...cluster.instances.values()].filter((i) => i.modelId === model).map((i) => i.instanceId);
  for (const id of ids) await deleteExoInstance(url, id, model);
  return ids;
}

/** Deletes one exo instance (`DELETE /instance/{id}`); one exo no longer has counts as deleted. */
export async function deleteExoInstance(url: string, instanceId: string, model: string): Promise<void> {
  const answer = await exoCall(url, 'DELETE', `/instance/${encodeURIComponent(instanceId)}`);
  if (answer.status !== 200 && answer.status !== 404)
    throw new NodeError('instance_not_found', `exo refused to delete the instance of ${model}: ${answer.message}`, 502);
}

/**
 * A placed instance's lifecycle read from its runners in exo's state, by the views' own
 * rule (shared/instance-state.ts `runnersLifecycle`).
 */
function reusedLifecycle(cluster: ExoCluster, instanceId: string | null): SafePairPlanEntry['state'] {
  const instance = instanceId ? cluster.instances.get(instanceId) : undefined;
  const runners = (instance?.shards ?? []).map((s) => cluster.runners.get(s.runnerId)?.tag ?? null);
  return runnersLifecycle(runners.map((tag) => ({ status: tag ?? 'missing', known: tag !== null })));
}
