/**
 * The GPU sharing check, through this node's own supervisor: makes sure both models
 * run (launching what is missing), runs the experiments asked for, and leaves the
 * instances as they were: what it launched it stops, fast synch it changed it puts
 * back, its own requests it cancels, also when cancelled.
 *
 * On an attached exo (both models have an instance there, or none runs locally and exo
 * runs two) the requests go through exobar's own `/v1/chat/completions`, which proxies
 * them to exo (exo-check-target.ts): experiments 1 and 2 run with exobar's hold on and
 * then off, experiment 4 deletes and places A's exo instance.
 */
import { cpus, release, totalmem, type } from 'node:os';
import type { CatalogModel } from '../../../shared/catalog';
import type { SharingCheckOptions, SharingCheckResult } from '../../../shared/sharing-check';
import type { LocalInstanceSnapshot } from '../../../shared/snapshot';
import type { ExobarNode } from '../node/node-types';
import { CheckRequests, nodeChannel } from './check-requests';
import { type CheckContext } from './check-context';
import { CHECK_HOLDS, runDecodeExperiment, type DecodeExperimentOptions } from './decode-experiment';
import { chooseExoModels, exoModels, exoResidency, type ExoCheckHooks } from './exo-check-target';
import { runIdleNeighbourExperiment, type NeighbourResidency } from './idle-neighbour-experiment';
import { proxyChannel } from './proxy-channel';
import { runThroughputExperiment } from './throughput-experiment';
import { runTtftExperiment } from './ttft-experiment';

/** The default pair where fewer than two models run: the sim's safe pair. */
export const DEFAULT_CHECK_PAIR: [string, string] = ['sim/llama-3.2-3b', 'sim/llama-3.2-1b'];

export interface RunSharingCheckInput {
  id: string;
  node: ExobarNode;
  options: SharingCheckOptions;
  signal: AbortSignal;
  progress(step: string, fraction: number): void;
  /** For a sharing policy (setting `sharing.policy`): experiment 2 under it. */
  decode?: Pick<DecodeExperimentOptions, 'policies' | 'applyPolicy'>;
  /** Replaces the platform test (tests). */
  appleSilicon?: boolean;
  /** The attached exo, for a check of exo's models through the proxy. */
  exo?: ExoCheckHooks;
}

const localInstances = (node: ExobarNode) => node.snapshot().instances.filter((i): i is LocalInstanceSnapshot => i.source === 'local');

/** [A, B]: the ones asked for; else the two running models (the larger prefills); else the sim pair. */
export function chooseModels(node: ExobarNode, asked: [string, string] | undefined): [CatalogModel, CatalogModel] {
  const catalog = node.models();
  const find = (id: string) => {
    const m = catalog.find((c) => c.id === id);
    if (!m) throw new Error(`unknown model "${id}"; known models: ${catalog.map((c) => c.id).join(', ')}`);
    return m;
  };
  if (asked) return [find(asked[0]), find(asked[1])];
  const running = [...new Set(localInstances(node).map((i) => i.model))].map(find);
  if (running.length >= 2) {
    const bySize = running.sort((x, y) => (y.memoryBytes ?? 0) - (x.memoryBytes ?? 0));
    return [bySize[0]!, bySize.at(-1)!];
  }
  return [find(DEFAULT_CHECK_PAIR[0]), find(DEFAULT_CHECK_PAIR[1])];
}

function quantizationOf(model: CatalogModel): string | null {
  if (model.engine === 'sim') return null;
  return /(\d+)[-_]?bit/i.exec(model.id)?.[0] ?? null;
}

function machineFacts(node: ExobarNode, appleSilicon: boolean): SharingCheckResult['machine'] {
  const mlx = node.snapshot().mlx ?? null;
  return {
    chip: cpus()[0]?.model ?? null,
    cpus: cpus().length,
    memoryBytes: totalmem(),
    os: `${type()} ${release()}`,
    arch: process.arch,
    appleSilicon,
    // The runtime's `version` is mlx-lm's; MLX's own is beside it.
    mlxVersion: mlx?.mlxVersion ?? null,
    mlxLmVersion: mlx?.version ?? null,
  };
}

/** The exo URL when the check runs on exo: asked models both on exo, or none asked, fewer than two local and two on exo. */
function exoTarget(node: ExobarNode, asked: [string, string] | undefined, exo: ExoCheckHooks | undefined): string | null {
  const url = exo?.exoUrl() ?? null;
  if (!url) return null;
  const onExo = exoModels(node);
  if (asked) return asked.every((m) => onExo.includes(m)) ? url : null;
  return new Set(localInstances(node).map((i) => i.model)).size < 2 && onExo.length >= 2 ? url : null;
}

/** A's local instances stopped through the node, and launched again as they were. */
function localResidency(node: ExobarNode, model: CatalogModel): NeighbourResidency {
  const before = localInstances(node).filter((i) => i.model === model.id);
  return {
    how: `stopped ${model.name}'s runner through the node; launched it again once measured (a new instance id)`,
    async unload() {
      for (const i of localInstances(node).filter((x) => x.model === model.id)) await node.deleteInstance(i.id);
    },
    async reload() {
      for (const i of before) {
        const again = await node.createInstance({ model: model.id, instanceType: i.instanceType, fastSynch: i.fastSynch.override, acknowledgeRisk: true });
        await node.waitForReady(again.id, 180_000);
      }
    },
  };
}

export async function runSharingCheck(input: RunSharingCheckInput): Promise<SharingCheckResult> {
  const { node, options, signal } = input;
  const appleSilicon = input.appleSilicon ?? (process.platform === 'darwin' && process.arch === 'arm64');
  const startedAt = Date.now();
  const exoUrl = exoTarget(node, options.models, input.exo);
  const instanceIds = () => (exoUrl ? node.snapshot().instances.filter((i) => i.source === 'exo') : localInstances(node)).map((i) => i.id);
  const instancesBefore = instanceIds();
  const [a, b] = exoUrl ? chooseExoModels(node, options.models) : chooseModels(node, options.models);
  if (a.id === b.id) throw new Error('the check needs two different models (A prefills, B is measured)');
  const requests = new CheckRequests(exoUrl ? proxyChannel(() => input.exo!.baseUrl()) : nodeChannel(node));
  const ctx: CheckContext = { node, a, b, requests, signal, progress: input.progress };
  const launched: string[] = [];
  const wanted = new Set(options.experiments ?? ['ttft', 'decode', 'throughput', 'idle_neighbour']);
  // On exo experiments 1 and 2 run with the hold on and off (exobar paces nothing there); locally under each sharing policy.
  const runs: Pick<DecodeExperimentOptions, 'policies' | 'applyPolicy' | 'holds' | 'applyHold'> = exoUrl
    ? { holds: CHECK_HOLDS, applyHold: (on) => input.exo!.applyHold(on) }
    : { ...input.decode };
  const aRanBefore = exoUrl ? true : localInstances(node).some((i) => i.model === a.id);
  const residency = exoUrl ? exoResidency(exoUrl, a.id, node) : localResidency(node, a);
  try {
    for (const model of exoUrl ? [] : [a, b]) {
      if (localInstances(node).some((i) => i.model === model.id)) continue;
      input.progress(`Launching ${model.name}`, 0.02);
      const instance = await node.createInstance({ model: model.id, instanceType: 'ring', fastSynch: 'auto', acknowledgeRisk: false });
      launched.push(instance.id);
      await node.waitForReady(instance.id, 180_000);
    }
    const skipped = { ran: false as const, reason: 'not asked for' };
    const ttft = wanted.has('ttft') ? await runTtftExperiment(ctx, { ...options, ...runs }, [0.05, 0.3]) : skipped;
    const decode = wanted.has('decode')
      ? await runDecodeExperiment(ctx, { promptTokens: options.promptTokens, decodeTokens: options.decodeTokens, ...runs }, [0.3, 0.55])
      : skipped;
    const throughput = wanted.has('throughput')
      ? await runThroughputExperiment(ctx, { ...options, appleSilicon, onExo: exoUrl !== null }, [0.55, 0.8])
      : skipped;
    // Last: it unloads A, which nothing after it needs.
    const idleNeighbour = wanted.has('idle_neighbour')
      ? await runIdleNeighbourExperiment(ctx, { decodeTokens: options.decodeTokens, residency, reload: aRanBefore }, [0.8, 0.97])
      : skipped;
    // A launched by the check and unloaded by experiment 4 is already gone.
    const live = new Set(localInstances(node).map((i) => i.id));
    input.progress('Putting the instances back as they were', 0.98);
    await requests.cancelAll();
    await Promise.all(launched.filter((id) => live.has(id)).map((id) => node.deleteInstance(id)));
    launched.length = 0;
    return {
      id: input.id,
      kind: 'sharing',
      startedAt,
      finishedAt: Date.now(),
      simulated: a.simulated || b.simulated,
      target: exoUrl ? { kind: 'exo', node: exoUrl } : { kind: 'local', node: null },
      machine: machineFacts(node, appleSilicon),
      models: [a, b].map((m, i) => ({
        role: i === 0 ? ('A' as const) : ('B' as const),
        id: m.id,
        name: m.name,
        engine: exoUrl ? 'exo' : m.engine,
        simulated: m.simulated,
        quantization: quantizationOf(m),
        contextLength: m.contextLength ?? null,
      })),
      options: {
        promptTokens: options.promptTokens,
        streams: options.streams,
        seconds: options.seconds,
        fastSynchCompare: options.fastSynchCompare,
        baseline: options.baseline,
      },
      ttft,
      decode,
      throughput,
      idleNeighbour,
      instancesBefore,
      instancesAfter: instanceIds(),
    };
  } finally {
    // Also on cancel or failure: no request of the check and no runner it launched outlives it.
    await requests.cancelAll();
    await Promise.all(launched.map((id) => node.deleteInstance(id).catch(() => undefined)));
    // A cancelled experiment 4 may have left A unloaded: bring back what ran before the check.
    if (aRanBefore && !(exoUrl ? exoModels(node) : localInstances(node).map((i) => i.model)).includes(a.id)) await residency.reload().catch(() => undefined);
  }
}
