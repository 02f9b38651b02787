/**
 * The proxy to exo, measured against the serving fake exo over real HTTP:
 *
 * - `exo_proxy_overhead_ms_median`: what going through exobar adds to the time to first
 *   token of a short streamed request (median of proxied minus median of direct,
 *   interleaved); target < 1 ms;
 * - `exo_proxy_stream_ratio`: streaming throughput through exobar over direct (tokens/s
 *   from first to last token); target >= 0.95;
 * - the measured stall against exo's blocking worker (3B prefilling ~30k tokens, one
 *   more 3B request queued, a short 1B request): the 1B's TTFT with the hold on
 *   (`exo_hold_ttft_s`), off (`exo_no_hold_ttft_s`) and the busy reference with nothing
 *   queued (`exo_busy_ttft_s`); target hold <= 1.2x busy. Seconds are calibrated
 *   (measured / time scale).
 *
 * Standalone: `node --import tsx bench/exo-proxy.ts [--json] [--time-scale X] [--trials N]`.
 */
import { Agent, request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { ExoClient } from '../electron/core/exo/attach/exo-client';
import { createExoServing, type ExoServing } from '../electron/core/exo/proxy/exo-serving';
import { startCore } from '../electron/core/start-core';
import { makePrompt } from '../shared/token-count';
import { startServingExoProcess, LLAMA_1B, LLAMA_3B, firstTokenMs, readTimedLines, type TimedLine } from '../test/support/fake-exo';
import { sleep } from '../test/support/eventually';
import { median } from '../test/support/median';

/** exobar (this process) attached to a serving fake exo in a process of its own, as exo is. */
interface BenchRig {
  exoUrl: string;
  exobarUrl: string;
  serving: ExoServing;
  hold: { enabled: boolean };
  close(): Promise<void>;
}

async function startBenchRig(mode: 'blocking' | 'fixed', timeScale: number): Promise<BenchRig> {
  const fake = await startServingExoProcess(mode, timeScale);
  const url = fake.url;
  const hold = { enabled: true };
  let serving: ExoServing | null = null;
  const client = new ExoClient({ url, fastIntervalMs: 100, onUpdate: () => serving?.traffic.reconcile() });
  serving = createExoServing({ source: () => client, holdEnabled: () => hold.enabled });
  const created = serving;
  client.start();
  const dataDir = mkdtempSync(join(tmpdir(), 'exobar-exo-bench-'));
  const core = await startCore({ dataDir, port: 0, rendererDir: null, logger: pino({ level: 'silent' }), extraRoutes: () => created.routes });
  for (let i = 0; i < 500 && !client.reading.instances; i++) await sleep(10);
  return {
    exoUrl: url,
    exobarUrl: core.url,
    serving,
    hold,
    async close() {
      await core.stop();
      await client.stop();
      await fake.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface ExoProxyBenchOptions {
  timeScale?: number;
  trials?: number;
  progress?: (line: string) => void;
}

export interface ExoProxyBench {
  exo_proxy_overhead_ms_median: number;
  exo_proxy_stream_ratio: number;
  exo_hold_ttft_s: number;
  exo_no_hold_ttft_s: number;
  exo_busy_ttft_s: number;
  exo_hold_over_busy: number;
  exo: {
    time_scale: number;
    ttft_direct_ms_median: number;
    ttft_proxied_ms_median: number;
    /** exobar's CPU time per proxied request (ms), independent of the machine's load. */
    proxy_cpu_ms_per_request: number;
    stream_tokens_per_s_direct: number;
    stream_tokens_per_s_proxied: number;
    stall_trials_s: { hold: number[]; no_hold: number[]; busy: number[] };
  };
}

const round = (value: number, digits = 3) => Math.round(value * 10 ** digits) / 10 ** digits;

function post(base: string, model: string, tokens: number, maxTokens: number): Promise<Response> {
  return fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: makePrompt(tokens, `b${Math.random()}`), max_tokens: maxTokens, stream: true }),
  });
}

/** One keep-alive agent for the TTFT samples: the client's own cost stays out of the difference. */
const sampler = new Agent({ keepAlive: true });

/** Milliseconds from sending a short streamed request to its first token line. */
function ttftOnce(base: string): Promise<number> {
  const body = JSON.stringify({ model: LLAMA_1B, messages: makePrompt(20, `b${Math.random()}`), max_tokens: 1, stream: true });
  return new Promise((resolve, reject) => {
    const start = performance.now();
    let first: number | null = null;
    const req = request(
      new URL('/v1/chat/completions', base),
      { method: 'POST', agent: sampler, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.on('data', (chunk: Buffer) => {
          if (first === null && chunk.includes('"choices"')) first = performance.now() - start;
        });
        res.on('end', () => (first === null ? reject(new Error('no token in the stream')) : resolve(first)));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function tokensPerSecond(lines: TimedLine[]): number {
  const tokens = lines.filter((l) => l.line.startsWith('data: {') && l.line.includes('"choices"'));
  return ((tokens.length - 1) / (tokens.at(-1)!.at - tokens[0]!.at)) * 1000;
}

async function overhead(rig: BenchRig, samples: number): Promise<{ direct: number; proxied: number; cpuMsPerRequest: number }> {
  const direct: number[] = [];
  const proxied: number[] = [];
  for (let i = 0; i < 5; i++) await ttftOnce(rig.exobarUrl); // warm the sockets
  for (let i = 0; i < samples; i++) {
    direct.push(await ttftOnce(rig.exoUrl));
    proxied.push(await ttftOnce(rig.exobarUrl));
  }
  // exobar's own CPU per request, which does not depend on how loaded the machine is: this
  // process runs the client and exobar, so proxied minus direct CPU is exobar's share.
  const cpuOf = async (base: string) => {
    const before = process.cpuUsage();
    for (let i = 0; i < samples; i++) await ttftOnce(base);
    const used = process.cpuUsage(before);
    return (used.user + used.system) / 1000 / samples;
  };
  const cpuDirect = await cpuOf(rig.exoUrl);
  const cpuProxied = await cpuOf(rig.exobarUrl);
  return { direct: median(direct), proxied: median(proxied), cpuMsPerRequest: cpuProxied - cpuDirect };
}

async function throughput(rig: BenchRig, trials: number): Promise<{ direct: number; proxied: number }> {
  const direct: number[] = [];
  const proxied: number[] = [];
  for (let i = 0; i < trials; i++) {
    direct.push(tokensPerSecond(await readTimedLines(await post(rig.exoUrl, LLAMA_1B, 20, 1500))));
    proxied.push(tokensPerSecond(await readTimedLines(await post(rig.exobarUrl, LLAMA_1B, 20, 1500))));
  }
  return { direct: median(direct), proxied: median(proxied) };
}

/** One run of the stall scenario; `queued` false is the busy reference. */
async function stallOnce(rig: BenchRig, queued: boolean, timeScale: number): Promise<number> {
  const long = post(rig.exobarUrl, LLAMA_3B, 30_000, 4).then((r) => readTimedLines(r));
  for (let i = 0; i < 500 && !rig.serving.traffic.active().some((r) => r.model === LLAMA_3B && r.phase === 'prefilling'); i++) await sleep(5);
  const second = queued ? post(rig.exobarUrl, LLAMA_3B, 50, 4).then((r) => readTimedLines(r)) : Promise.resolve([]);
  await sleep(3_500 * timeScale);
  const start = performance.now();
  const ttft = firstTokenMs(await readTimedLines(await post(rig.exobarUrl, LLAMA_1B, 30, 4)), start)!;
  await Promise.all([long, second]);
  return ttft / 1000 / timeScale;
}

/** Runs the whole exo proxy benchmark. */
export async function measureExoProxy(options: ExoProxyBenchOptions = {}): Promise<ExoProxyBench> {
  const timeScale = options.timeScale ?? 0.25;
  const trials = options.trials ?? 3;
  const log = options.progress ?? (() => undefined);

  log('exo proxy: TTFT overhead and streaming throughput (fixed fake exo, time scale 0.05)');
  const fast = await startBenchRig('fixed', 0.05);
  let ttft: { direct: number; proxied: number; cpuMsPerRequest: number };
  let stream: { direct: number; proxied: number };
  try {
    ttft = await overhead(fast, 100);
    stream = await throughput(fast, trials);
  } finally {
    await fast.close();
  }

  log(`exo proxy: the stall scenario against the blocking fake exo, time scale ${timeScale}, ${trials} trials per condition`);
  const rig = await startBenchRig('blocking', timeScale);
  const runs = { hold: [] as number[], no_hold: [] as number[], busy: [] as number[] };
  try {
    for (let i = 0; i < trials; i++) {
      rig.hold.enabled = true;
      runs.busy.push(await stallOnce(rig, false, timeScale));
      runs.hold.push(await stallOnce(rig, true, timeScale));
      rig.hold.enabled = false;
      runs.no_hold.push(await stallOnce(rig, true, timeScale));
      log(`  trial ${i + 1}: busy ${runs.busy.at(-1)!.toFixed(3)} s, hold ${runs.hold.at(-1)!.toFixed(3)} s, no hold ${runs.no_hold.at(-1)!.toFixed(3)} s`);
    }
  } finally {
    await rig.close();
  }
  const busy = median(runs.busy);
  return {
    exo_proxy_overhead_ms_median: round(ttft.proxied - ttft.direct),
    exo_proxy_stream_ratio: round(stream.proxied / stream.direct),
    exo_hold_ttft_s: round(median(runs.hold)),
    exo_no_hold_ttft_s: round(median(runs.no_hold)),
    exo_busy_ttft_s: round(busy),
    exo_hold_over_busy: round(median(runs.hold) / busy),
    exo: {
      time_scale: timeScale,
      ttft_direct_ms_median: round(ttft.direct),
      ttft_proxied_ms_median: round(ttft.proxied),
      proxy_cpu_ms_per_request: round(ttft.cpuMsPerRequest),
      stream_tokens_per_s_direct: round(stream.direct, 1),
      stream_tokens_per_s_proxied: round(stream.proxied, 1),
      stall_trials_s: { hold: runs.hold.map((v) => round(v)), no_hold: runs.no_hold.map((v) => round(v)), busy: runs.busy.map((v) => round(v)) },
    },
  };
}

/** The table rows (measure, value, target) of the exo proxy benchmark, for this script and `npm run bench`. */
export function exoProxyRows(result: ExoProxyBench): Array<[string, string, string]> {
  return [
    [
      'exo_proxy_overhead_ms_median',
      `${result.exo_proxy_overhead_ms_median} ms (direct ${result.exo.ttft_direct_ms_median}, proxied ${result.exo.ttft_proxied_ms_median}; exobar CPU ${result.exo.proxy_cpu_ms_per_request} ms/request)`,
      '< 1 ms',
    ],
    [
      'exo_proxy_stream_ratio',
      `${result.exo_proxy_stream_ratio} (${result.exo.stream_tokens_per_s_proxied} vs ${result.exo.stream_tokens_per_s_direct} tok/s)`,
      '>= 0.95',
    ],
    ['exo_busy_ttft_s', `${result.exo_busy_ttft_s} s`, 'reference (exo: 0.38-0.40)'],
    ['exo_hold_ttft_s', `${result.exo_hold_ttft_s} s (${result.exo_hold_over_busy}x busy)`, '<= 1.2x busy'],
    ['exo_no_hold_ttft_s', `${result.exo_no_hold_ttft_s} s`, 'stalls (exo: 15.1-15.7)'],
  ];
}

function parseArgs(argv: string[]): { json: boolean; timeScale: number; trials: number } {
  const args = { json: false, timeScale: 0.25, trials: 3 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--json') args.json = true;
    else if (arg === '--time-scale' || arg === '--trials') {
      const value = Number(argv[++i]);
      if (!Number.isFinite(value) || value <= 0) throw new Error(`${arg} needs a positive number`);
      if (arg === '--time-scale') args.timeScale = value;
      else args.trials = Math.round(value);
    } else throw new Error(`unknown argument "${arg}"; usage: node --import tsx bench/exo-proxy.ts [--json] [--time-scale X] [--trials N]`);
  }
  return args;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const result = await measureExoProxy({
    timeScale: args.timeScale,
    trials: args.trials,
    progress: args.json ? undefined : (line) => process.stderr.write(`  ${line}\n`),
  });
  if (args.json) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return;
  }
  const rows = exoProxyRows(result);
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i]!.length), ['measure', 'value', 'target'][i]!.length));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  process.stdout.write(
    `${line(['measure', 'value', 'target'])}\n${line(widths.map((w) => '-'.repeat(w)))}\n${rows.map(line).join('\n')}\n(stall times in calibrated seconds: measured / time scale ${args.timeScale})\n`,
  );
}

// Run as a script only (`node --import tsx bench/exo-proxy.ts`): inside the built bench bundle import.meta.url is the bundle's own.
if (process.argv[1]?.endsWith('exo-proxy.ts')) {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
