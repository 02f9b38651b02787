/**
 * Fair sharing of one GPU, measured (docs/sharing-policy.md): model B streams while
 * model A prefills a long prompt on the same GPU, with the sharing policy off and
 * `decode_first`, in one run and one node (the policy is switched between trials).
 *
 *   fair_itl_p95_ratio_off / _on: B's ITL p95 during A's prefill over B's solo ITL p95
 *   fair_prefill_cost_ratio:      A's TTFT with the policy on over off
 *
 * On real MLX (two runner processes of tiny random-weight models on this machine's CPU
 * cores, which they really share) and on the sim, whose figures are labelled simulated:
 * the sim's decode under sharing is its time-slicing assumption, calibrated on TTFT only.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CatalogModel } from '../shared/catalog';
import type { SharingPolicy } from '../shared/sharing-policy';
import { makePrompt } from '../shared/token-count';
import { mlxRunnerCommand } from '../electron/core/mlx/mlx-runner-command';
import { createNode } from '../electron/core/node/node';
import { packageRoot } from '../electron/core/package-root';
import { percentile } from '../shared/stats';
import type { ExobarNode } from '../electron/core/node/node-types';
import type { NodeEvent } from '../electron/core/events/node-event';
import type { PacingTuning } from '../electron/core/pacing/pacing-plan';
import type { SpawnSpec } from '../electron/core/supervisor/spawn-spec';
import { median } from '../test/support/median';
import { sleep } from '../test/support/eventually';

export interface FairSharingOptions {
  engine: 'sim' | 'mlx';
  /** Sim only. */
  timeScale?: number;
  trials: number;
  /** A's long prompt. */
  promptTokens: number;
  /** The Python with mlx-lm (mlx only). */
  python?: string;
  tuning?: Partial<PacingTuning>;
  progress?: (line: string) => void;
  /** Real MLX: B is the tiny llama (default) or the wider one, whose decode steps take milliseconds on a CPU. */
  mlxB?: typeof MLX_TINY_LLAMA | typeof MLX_TINY_LLAMA_WIDE;
}

export interface FairSharingResult {
  engine: 'sim' | 'mlx';
  simulated: boolean;
  models: { a: string; b: string };
  prompt_tokens: number;
  trials: number;
  fair_itl_p95_ratio_off: number;
  fair_itl_p95_ratio_on: number;
  fair_prefill_cost_ratio: number;
  /** Per policy: medians of B's solo and shared ITL p95 (ms) and A's TTFT (ms). */
  detail: Record<SharingPolicy, { solo_itl_p95_ms: number; shared_itl_p95_ms: number; a_ttft_ms: number; ratios: number[] }>;
  /** The node's pacing decisions in the `decode_first` trials. */
  pacing_events: number;
  /** The pacings the policy chose (chunk tokens, pause ms), as the node logged them. */
  pacings: Array<{ chunkTokens: number | null; pauseMs: number }>;
  /** Why each paced prefill went back to full speed, with its estimated added time. */
  releases: Array<{ reason: string; pacedMs: number; addedPct: number }>;
  /**
   * Per `decode_first` trial, what the adaptive policy decided on: the live ITL ratios (B's
   * live ITL beside A's prefill over its solo ITL) that engaged it, why it released, and
   * for a prefill left at full speed the highest ratio it saw (null: B's solo ITL unknown).
   */
  decisions: Array<{ trial: number; engaged_at_ratio: number[]; releases: string[]; not_paced_peak_ratio: number | null | undefined }>;
  /** decode_first trials in which A was paced at all. */
  paced_trials: number;
  note: string;
}

const SIM_A = 'sim/llama-3.2-3b';
const SIM_B = 'sim/llama-3.2-1b';
const MLX_A = 'mlx/tiny-mamba2';
/** The tiny random-weight llama (real MLX), as the benches name it. */
export const MLX_TINY_LLAMA = 'mlx/tiny-llama';
const MLX_B = MLX_TINY_LLAMA;
/** The wider tiny llama (real MLX): its inter-token gaps measure compute, not how often the node reads the pipe. */
export const MLX_TINY_LLAMA_WIDE = 'mlx/tiny-llama-wide';
const TOOLS = join(packageRoot(), 'electron', 'runners', 'mlx', 'tools', 'tiny_models.py');

/** The tiny models' directories (made or reused by tiny_models.py). */
export function tinyModels(python: string): CatalogModel[] {
  const out = execFileSync(python, [TOOLS, '--family', 'mamba2', '--family', 'llama', '--family', 'llama-wide'], { encoding: 'utf8', timeout: 300_000 });
  const dirs = new Map(
    out
      .trim()
      .split('\n')
      .map((line) => line.split('\t') as [string, string]),
  );
  const model = (id: string, family: string, name: string): CatalogModel => ({
    id,
    name,
    engine: 'mlx',
    simulated: false,
    memoryBytes: 64 * 1024 ** 2,
    sizeClass: 'small',
    path: dirs.get(family)!,
  });
  return [
    model(MLX_A, 'mamba2', 'tiny mamba2 (random weights)'),
    model(MLX_B, 'llama', 'tiny llama (random weights)'),
    model(MLX_TINY_LLAMA_WIDE, 'llama-wide', 'tiny wide llama (random weights)'),
  ];
}

export interface Rig {
  node: ReturnType<typeof createNode>;
  a: string;
  b: string;
  setPolicy(policy: SharingPolicy): void;
  close(): Promise<void>;
}

export async function createRig(options: FairSharingOptions): Promise<Rig> {
  const dataDir = mkdtempSync(join(tmpdir(), 'exobar-fair-'));
  let policy: SharingPolicy = 'off';
  const mlx = options.engine === 'mlx';
  const python = options.python ?? process.env.EXOBAR_MLX_PYTHON;
  if (mlx && !python) throw new Error('the real-MLX fair-sharing bench needs EXOBAR_MLX_PYTHON');
  const tiny = mlx ? tinyModels(python!) : [];
  const node = createNode({
    dataDir,
    simTimeScale: options.timeScale ?? 1,
    sharingPolicy: () => policy,
    ...(options.tuning ? { pacingTuning: options.tuning } : {}),
    ...(mlx
      ? {
          extraModels: () => tiny,
          mlxSpawnSpec: (model: CatalogModel): SpawnSpec => {
            const command = mlxRunnerCommand({ python: python!, model: model.path!, engine: 'mlx', fastSynch: false });
            const env = Object.fromEntries(Object.entries(command.env).filter((e): e is [string, string] => e[1] !== undefined));
            return { command: command.command, args: command.args, env };
          },
        }
      : {}),
  });
  const launch = async (model: string) => {
    const instance = await node.createInstance({ model, instanceType: 'ring', fastSynch: 'auto', acknowledgeRisk: false });
    await node.waitForReady(instance.id, 180_000);
    return model;
  };
  const [a, b] = await Promise.all([launch(mlx ? MLX_A : SIM_A), launch(mlx ? (options.mlxB ?? MLX_B) : SIM_B)]);
  return {
    node,
    a,
    b,
    setPolicy: (next) => (policy = next),
    async close() {
      await node.shutdown();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

interface Stream {
  tokenAt: number[];
  ackAt: number | null;
  firstTokenAt: number | null;
  submittedAt: number;
  done: Promise<void>;
  cancel(): void;
}

function stream(node: ExobarNode, model: string, promptTokens: number, maxTokens: number, salt: string): Stream {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  const s: Stream = { tokenAt: [], ackAt: null, firstTokenAt: null, submittedAt: performance.now(), done, cancel: () => undefined };
  const handle = node.submit({ model, messages: makePrompt(promptTokens, salt), maxTokens, temperature: 0 }, (event) => {
    const now = performance.now();
    if (event.type === 'acknowledged') s.ackAt = now;
    else if (event.type === 'token') {
      s.firstTokenAt ??= now;
      s.tokenAt.push(now);
    } else if (event.type !== 'prefill_progress') finish();
  });
  s.cancel = () => void node.cancel(handle.id);
  return s;
}

/** p95 of the gaps between consecutive tokens that end within [from, to]. */
function itlP95(tokenAt: number[], from: number, to: number): number | null {
  const gaps: number[] = [];
  for (let i = 1; i < tokenAt.length; i++) if (tokenAt[i]! >= from && tokenAt[i]! <= to) gaps.push(tokenAt[i]! - tokenAt[i - 1]!);
  return percentile(
    gaps.sort((x, y) => x - y),
    0.95,
  );
}

/** B alone: its ITL p95 over `ms` of streaming. */
async function soloTrial(rig: Rig, ms: number, salt: string): Promise<number> {
  const b = stream(rig.node, rig.b, 20, 100_000, salt);
  while (b.tokenAt.length < 3) await sleep(5);
  const from = performance.now();
  await sleep(ms);
  b.cancel();
  await b.done;
  return itlP95(b.tokenAt, from, performance.now())!;
}

/** B streams, A prefills its long prompt: B's ITL p95 during A's prefill, A's TTFT. */
async function sharedTrial(rig: Rig, promptTokens: number, salt: string): Promise<{ itlP95Ms: number; ttftMs: number }> {
  const b = stream(rig.node, rig.b, 20, 100_000, `${salt}-b`);
  while (b.tokenAt.length < 3) await sleep(5);
  const a = stream(rig.node, rig.a, promptTokens, 2, `${salt}-a`);
  await a.done;
  b.cancel();
  await b.done;
  if (a.firstTokenAt === null || a.ackAt === null) throw new Error('fair-sharing bench: A produced no token');
  const itl = itlP95(b.tokenAt, a.ackAt, a.firstTokenAt);
  if (itl === null) throw new Error('fair-sharing bench: B produced no token during A’s prefill');
  return { itlP95Ms: itl, ttftMs: a.firstTokenAt - a.submittedAt };
}

/** What the policy decided in one trial, from the node's events. */
function decisionsOf(trial: number, events: readonly NodeEvent[]): FairSharingResult['decisions'][number] {
  const notNeeded = events.find((e) => e.kind === 'pacing_not_needed');
  return {
    trial,
    engaged_at_ratio: events.flatMap((e) => (e.kind === 'pacing_engaged' && e.data.trigger ? [e.data.trigger.ratio] : [])),
    releases: events.flatMap((e) => (e.kind === 'pacing_released' ? [e.data.reason] : [])),
    not_paced_peak_ratio: notNeeded?.kind === 'pacing_not_needed' ? (notNeeded.data.peak?.ratio ?? null) : undefined,
  };
}

/** Runs the measurement: per trial, both policies (solo and shared each), alternating. */
export async function measureFairSharing(options: FairSharingOptions): Promise<FairSharingResult> {
  const log = options.progress ?? (() => undefined);
  const rig = await createRig(options);
  try {
    const policies: SharingPolicy[] = ['off', 'decode_first'];
    const samples: Record<SharingPolicy, { solo: number[]; shared: number[]; ttft: number[]; ratios: number[] }> = {
      off: { solo: [], shared: [], ttft: [], ratios: [] },
      decode_first: { solo: [], shared: [], ttft: [], ratios: [] },
    };
    const decisions: FairSharingResult['decisions'] = [];
    // Warm both paths (first-request compile work is not what is measured).
    await sharedTrial(rig, Math.min(options.promptTokens, 4500), 'warm');
    for (let trial = 0; trial < options.trials; trial++) {
      for (const policy of trial % 2 === 0 ? policies : [...policies].reverse()) {
        rig.setPolicy(policy);
        const seen: NodeEvent[] = [];
        const unsubscribe = rig.node.eventLog.subscribe((e) => void seen.push(e));
        const shared = await sharedTrial(rig, options.promptTokens, `t${trial}-${policy}`).finally(unsubscribe);
        if (policy === 'decode_first') decisions.push(decisionsOf(trial + 1, seen));
        const solo = await soloTrial(rig, Math.min(3000, Math.max(800, shared.ttftMs / 2)), `s${trial}-${policy}`);
        const s = samples[policy];
        s.solo.push(solo);
        s.shared.push(shared.itlP95Ms);
        s.ttft.push(shared.ttftMs);
        s.ratios.push(shared.itlP95Ms / solo);
        log(
          `fair sharing (${options.engine}) trial ${trial + 1} ${policy}: B ITL p95 ${solo.toFixed(1)} ms solo, ${shared.itlP95Ms.toFixed(1)} ms during A's prefill; A TTFT ${shared.ttftMs.toFixed(0)} ms`,
        );
      }
    }
    const events = rig.node.eventLog.all();
    const pacingEvents = events.filter((e) => e.kind === 'pacing_engaged' || e.kind === 'pacing_released').length;
    const pacings = events.flatMap((e) => (e.kind === 'pacing_engaged' ? [{ chunkTokens: e.data.chunkTokens, pauseMs: e.data.pauseMs }] : []));
    const releases = events.flatMap((e) =>
      e.kind === 'pacing_released' ? [{ reason: e.data.reason, pacedMs: e.data.pacedMs, addedPct: e.data.addedPct }] : [],
    );
    const detail = Object.fromEntries(
      policies.map((p) => [
        p,
        {
          solo_itl_p95_ms: r1(median(samples[p].solo)),
          shared_itl_p95_ms: r1(median(samples[p].shared)),
          a_ttft_ms: r1(median(samples[p].ttft)),
          ratios: samples[p].ratios.map(r3),
        },
      ]),
    ) as FairSharingResult['detail'];
    const simulated = options.engine === 'sim';
    return {
      engine: options.engine,
      simulated,
      models: { a: rig.a, b: rig.b },
      prompt_tokens: options.promptTokens,
      trials: options.trials,
      fair_itl_p95_ratio_off: r3(median(samples.off.ratios)),
      fair_itl_p95_ratio_on: r3(median(samples.decode_first.ratios)),
      fair_prefill_cost_ratio: r3(median(samples.decode_first.ttft) / median(samples.off.ttft)),
      detail,
      pacing_events: pacingEvents,
      pacings,
      releases,
      decisions,
      paced_trials: decisions.filter((d) => d.engaged_at_ratio.length > 0).length,
      note: simulated
        ? 'simulated: the sim slows decode under sharing by its time-slicing assumption (calibrated on TTFT only); not evidence'
        : 'real MLX on this machine’s CPU: two runner processes share its cores',
    };
  } finally {
    await rig.close();
  }
}

/** The rows of the bench table. */
export function fairSharingRows(result: FairSharingResult): string[][] {
  const label = result.simulated ? ' (simulated)' : ' (real MLX, CPU)';
  const d = result.detail;
  return [
    [`fair_itl_p95_ratio_off${label}`, `${result.fair_itl_p95_ratio_off} (B ${d.off.shared_itl_p95_ms} / ${d.off.solo_itl_p95_ms} ms)`, 'as measured'],
    [
      `fair_itl_p95_ratio_on${label}`,
      `${result.fair_itl_p95_ratio_on} (B ${d.decode_first.shared_itl_p95_ms} / ${d.decode_first.solo_itl_p95_ms} ms)`,
      '<= 1.5',
    ],
    [`fair_prefill_cost_ratio${label}`, `${result.fair_prefill_cost_ratio} (A TTFT ${d.decode_first.a_ttft_ms} / ${d.off.a_ttft_ms} ms)`, '<= 1.15'],
    [`decode_first trials paced${label}`, pacedWords(result), 'only where B is slowed'],
  ];
}

/** "3 of 3 (14 engagements at B's ITL 1.2-1.51× solo, median 1.28×; 0 left at full speed)". */
function pacedWords(result: FairSharingResult): string {
  const ratios = result.decisions.flatMap((d) => d.engaged_at_ratio).sort((x, y) => x - y);
  const left = result.decisions.filter((d) => d.not_paced_peak_ratio !== undefined).length;
  const at = ratios.length > 0 ? ` at B's ITL ${ratios[0]}-${ratios.at(-1)}× solo, median ${r3(median(ratios))}×` : '';
  return `${result.paced_trials} of ${result.trials} (${ratios.length} engagements${at}; ${left} left at full speed)`;
}

const r1 = (x: number) => Math.round(x * 10) / 10;
const r3 = (x: number) => Math.round(x * 1000) / 1000;

/** The seed's long prompt on the sim; on real MLX a prompt whose prefill takes seconds on two CPU cores. */
export const FAIR_SIM_PROMPT_TOKENS = 30_000;
export const FAIR_MLX_PROMPT_TOKENS = 12_000;

/** The bench's fair-sharing section: real MLX when EXOBAR_MLX_PYTHON is set, and the sim, labelled simulated. */
export async function measureFairSection(
  timeScale: number,
  trials: number,
  log: (line: string) => void,
): Promise<{ json: Record<string, unknown>; rows: string[][] }> {
  const python = process.env.EXOBAR_MLX_PYTHON;
  let mlx: FairSharingResult | null = null;
  let mlxSkipped: string | null = null;
  if (python) {
    log(
      `fair sharing on real MLX (CPU): tiny mamba2 prefills ${FAIR_MLX_PROMPT_TOKENS} tokens while tiny llama streams, policy off and decode_first, ${trials} trials`,
    );
    mlx = await measureFairSharing({ engine: 'mlx', python, trials, promptTokens: FAIR_MLX_PROMPT_TOKENS, progress: log });
  } else mlxSkipped = 'EXOBAR_MLX_PYTHON is not set: no real-MLX figures';
  log(`fair sharing on the sim (simulated), time scale ${timeScale}: the 3B prefills ${FAIR_SIM_PROMPT_TOKENS} tokens while the 1B streams, ${trials} trials`);
  const sim = await measureFairSharing({ engine: 'sim', timeScale, trials, promptTokens: FAIR_SIM_PROMPT_TOKENS, progress: log });
  const main = mlx ?? sim;
  const json = {
    fair_itl_p95_ratio_off: main.fair_itl_p95_ratio_off,
    fair_itl_p95_ratio_on: main.fair_itl_p95_ratio_on,
    fair_prefill_cost_ratio: main.fair_prefill_cost_ratio,
    fair_source: main.simulated ? 'sim (simulated)' : 'real MLX (CPU)',
    fair_simulated: {
      fair_itl_p95_ratio_off: sim.fair_itl_p95_ratio_off,
      fair_itl_p95_ratio_on: sim.fair_itl_p95_ratio_on,
      fair_prefill_cost_ratio: sim.fair_prefill_cost_ratio,
      simulated: true,
    },
    fair_sharing: { mlx, mlx_skipped: mlxSkipped, sim },
  };
  return { json, rows: [...(mlx ? fairSharingRows(mlx) : [['fair sharing on real MLX', 'skipped', mlxSkipped!]]), ...fairSharingRows(sim)] };
}
