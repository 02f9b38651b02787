/**
 * The GPU sharing check, through this node's own supervisor: makes sure both models
 * run (launching what is missing), runs the experiments asked for, and leaves the
 * instances as they were: what it launched it stops, fast synch it changed it puts
 * back, its own requests it cancels, also when cancelled.
 */
import { cpus, release, totalmem, type } from 'node:os';
import type { CatalogModel } from '../../../shared/catalog';
import type { SharingCheckOptions, SharingCheckResult } from '../../../shared/sharing-check';
import type { LocalInstanceSnapshot } from '../../../shared/snapshot';
import type { ExobarNode } from '../node/node-types';
import { CheckRequests } from './check-requests';
import { type CheckContext } from './check-context';
import { runDecodeExperiment, type DecodeExperimentOptions } from './decode-experiment';
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

export async function runSharingCheck(input: RunSharingCheckInput): Promise<SharingCheckResult> {
  const { node, options, signal } = input;
  const appleSilicon = input.appleSilicon ?? (process.platform === 'darwin' && process.arch === 'arm64');
  const startedAt = Date.now();
  const instancesBefore = localInstances(node).map((i) => i.id);
  const [a, b] = chooseModels(node, options.models);
  if (a.id === b.id) throw new Error('the check needs two different models (A prefills, B is measured)');
  const requests = new CheckRequests(node);
  const ctx: CheckContext = { node, a, b, requests, signal, progress: input.progress };
  const launched: string[] = [];
  const wanted = new Set(options.experiments ?? ['ttft', 'decode', 'throughput']);
  try {
    for (const model of [a, b]) {
      if (localInstances(node).some((i) => i.model === model.id)) continue;
      input.progress(`Launching ${model.name}`, 0.02);
      const instance = await node.createInstance({ model: model.id, instanceType: 'ring', fastSynch: 'auto', acknowledgeRisk: false });
      launched.push(instance.id);
      await node.waitForReady(instance.id, 180_000);
    }
    const skipped = { ran: false as const, reason: 'not asked for' };
    const ttft = wanted.has('ttft') ? await runTtftExperiment(ctx, options, [0.05, 0.35]) : skipped;
    const decode = wanted.has('decode')
      ? await runDecodeExperiment(ctx, { promptTokens: options.promptTokens, decodeTokens: options.decodeTokens, ...input.decode }, [0.35, 0.6])
      : skipped;
    const throughput = wanted.has('throughput') ? await runThroughputExperiment(ctx, { ...options, appleSilicon }, [0.6, 0.97]) : skipped;
    input.progress('Putting the instances back as they were', 0.98);
    await requests.cancelAll();
    await Promise.all(launched.map((id) => node.deleteInstance(id)));
    launched.length = 0;
    return {
      id: input.id,
      kind: 'sharing',
      startedAt,
      finishedAt: Date.now(),
      simulated: a.simulated || b.simulated,
      target: { kind: 'local', node: null },
      machine: machineFacts(node, appleSilicon),
      models: [a, b].map((m, i) => ({
        role: i === 0 ? ('A' as const) : ('B' as const),
        id: m.id,
        name: m.name,
        engine: m.engine,
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
      instancesBefore,
      instancesAfter: localInstances(node).map((i) => i.id),
    };
  } finally {
    // Also on cancel or failure: no request of the check and no runner it launched outlives it.
    await requests.cancelAll();
    await Promise.all(launched.map((id) => node.deleteInstance(id).catch(() => undefined)));
  }
}
