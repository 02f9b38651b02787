/**
 * `npm run bench`: exobar's benchmarks in one run, on the built code (out/node/bench.mjs,
 * built from this file by scripts/build-node.js; the runners are the shipped bundle).
 * Prints a table, or with `--json` only JSON. `--time-scale X` scales the sim
 * (1 = calibrated real time), `--trials N`.
 */
import { measureApiOverhead } from './api-overhead';
import { API_STALL_CONDITIONS, measureApiStall } from './api-stall-scenario';
import { measureRuntime, runtimeRows } from './runtime-bench';
import { exoPollRows, measureExoPollCpu } from './exo-poll-cpu';
import { exoProxyRows, measureExoProxy } from './exo-proxy';
import { measureStall, STALL_CONDITIONS } from './stall-scenario';
import { measureFairSection } from './fair-sharing';
import { measureSharingCheck } from './sharing-check';
import { measureMetricsScrape } from './metrics-scrape';
import { measureRequestLogCost } from './request-log-cost';
import { measureOnDemandTtft } from './on-demand-ttft';
import { measureStructuredDecode, type StructuredDecode } from './structured-decode';
import { measureEngineVsMlxLm } from './engine-vs-mlx-lm';

const ONLY = ['fair', 'sharing', 'metrics', 'on-demand', 'exo-poll', 'structured', 'engine'] as const;

interface BenchArgs {
  json: boolean;
  timeScale: number;
  trials: number;
  /**
   * `fair`: only the fair-sharing rows; `sharing`: only the sharing check's rows; `metrics`: the scrape and the request log's cost;
   * `on-demand`: the cold and warm TTFT of a model loaded on request; `exo-poll`: attach mode's CPU while polling a real-size exo state;
   * `structured`: constrained decoding's cost on real MLX (structured_decode_ratio);
   * `engine`: the MLX engine against mlx_lm.server on a tiny real model (only with `--only`: minutes of real MLX).
   */
  only: (typeof ONLY)[number] | null;
  /** True when `--trials` was given (the engine phase runs one trial otherwise). */
  trialsGiven: boolean;
  /** `--engine-scale X`: the engine phase's prompt lengths and token counts times X (default 1, the sizes). */
  engineScale: number;
}

function parseArgs(argv: string[]): BenchArgs {
  const args: BenchArgs = { json: false, timeScale: 1, trials: 3, only: null, engineScale: 1, trialsGiven: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--json') args.json = true;
    else if (arg === '--only') {
      const only = argv[++i];
      const known = ONLY.find((o) => o === only);
      if (!known) fail('--only takes "fair", "sharing", "metrics", "on-demand", "exo-poll", "structured" or "engine"');
      args.only = known;
    } else if (arg === '--time-scale' || arg === '--trials' || arg === '--engine-scale') {
      const value = Number(argv[++i]);
      if (!Number.isFinite(value) || value <= 0) fail(`${arg} needs a positive number`);
      if (arg === '--time-scale') args.timeScale = value;
      else if (arg === '--engine-scale') args.engineScale = value;
      else {
        args.trials = Math.round(value);
        args.trialsGiven = true;
      }
    } else fail(`unknown argument "${arg}"`);
  }
  return args;
}

function fail(message: string): never {
  process.stderr.write(`bench: ${message}\nusage: npm run bench -- [--json] [--time-scale X] [--trials N] [--only fair|sharing|metrics|on-demand|exo-poll|structured|engine] [--engine-scale X]\n`);
  process.exit(2);
}

const EXPECTED: Record<string, string> = {
  alone: 'about 0.23 s (exo: 0.23)',
  busy: 'about 0.38-0.40 s (exo: 0.38-0.40)',
  queued_baseline: 'stalls, >= 5x busy (exo: 15.1-15.7)',
  queued_exobar: 'within 1.2x of busy (exo: 0.34-0.42)',
  batch_full_baseline: "3B waits for the 1B's 9 acks, one step each (exo's behaviour): about 1.8 s",
  batch_full_exobar: '3B TTFT within 1.2x of busy',
};

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const log = (line: string) => {
    if (!args.json) process.stderr.write(`  ${line}\n`);
  };
  if (args.only === 'sharing') {
    const sharing = await measureSharingCheck(args.timeScale, log);
    if (args.json) process.stdout.write(`${JSON.stringify({ time_scale: args.timeScale, ...sharing.json }, null, 2)}\n`);
    else printTable(['measure', 'value', 'target'], sharing.rows);
    return;
  }
  if (args.only === 'metrics') {
    const metrics = await measureMetricsSection(args, log);
    if (args.json) process.stdout.write(`${JSON.stringify({ time_scale: args.timeScale, ...metrics.json }, null, 2)}\n`);
    else printTable(['measure', 'value', 'target'], metrics.rows);
    return;
  }
  if (args.only === 'on-demand') {
    const onDemand = await measureOnDemandTtft(args.timeScale, args.trials, log);
    if (args.json) process.stdout.write(`${JSON.stringify({ time_scale: args.timeScale, ...onDemand.json }, null, 2)}\n`);
    else printTable(['measure', 'value', 'target'], onDemand.rows);
    return;
  }
  if (args.only === 'engine') {
    // One trial unless asked: each is minutes of real MLX per server.
    const trials = args.trialsGiven ? args.trials : 1;
    const engine = await measureEngineVsMlxLm({ trials, scale: args.engineScale }, log);
    if (args.json) process.stdout.write(`${JSON.stringify(engine.json, null, 2)}\n`);
    else printTable(['measure', 'exobar / mlx_lm.server', 'target'], engine.rows);
    return;
  }
  if (args.only === 'exo-poll') {
    const exoPoll = await measureExoPollCpu({}, log);
    if (args.json) process.stdout.write(`${JSON.stringify({ exo_poll_cpu_percent: exoPoll.exo_poll_cpu_percent, exo_poll: exoPoll }, null, 2)}\n`);
    else printTable(['measure', 'value', 'target'], exoPollRows(exoPoll));
    return;
  }
  if (args.only === 'structured') {
    const structured = await measureStructuredDecode(args.trials, log);
    if (args.json) process.stdout.write(`${JSON.stringify(structured, null, 2)}\n`);
    else printTable(['measure', 'value', 'target'], structuredRows(structured));
    return;
  }
  if (args.only === 'fair') {
    const fair = await measureFairSection(args.timeScale, args.trials, log);
    // With --json the table goes to stderr, so stdout stays one JSON document.
    printTable(['measure', 'value', 'target'], fair.rows, args.json ? process.stderr : process.stdout);
    if (args.json) process.stdout.write(`${JSON.stringify({ time_scale: args.timeScale, ...fair.json }, null, 2)}\n`);
    return;
  }
  log('runtime: sim runner start and memory, exobar serve at rest (built, and tsx for contrast)');
  const runtime = await measureRuntime(log);
  log(`supervisor stall scenario, time scale ${args.timeScale}, ${args.trials} trials per condition`);
  const stall = await measureStall(args.timeScale, args.trials, log);
  const busy = stall.ttft.busy.median_s;
  const ratios = {
    queued_exobar_over_busy: round(stall.ttft.queued_exobar.median_s / busy),
    queued_baseline_over_busy: round(stall.ttft.queued_baseline.median_s / busy),
    batch_full_exobar_over_busy: round(stall.ttft.batch_full_exobar.median_s / busy),
    batch_full_baseline_over_busy: round(stall.ttft.batch_full_baseline.median_s / busy),
  };

  log(`local API: added latency and streaming throughput, time scale ${args.timeScale}`);
  const api = await measureApiOverhead({ timeScale: args.timeScale, progress: log });
  log(`supervisor stall scenario through the local API with the openai client, ${args.trials} trials per condition`);
  const apiStall = await measureApiStall(args.timeScale, args.trials, log);
  log('attach mode: exobar CPU while polling a fake exo (4 Macs, 4 instances, 50 requests) at 2 Hz');
  const exoPoll = await measureExoPollCpu({}, log);
  // The stall against exo's blocking worker lasts ~16 s per no-hold trial at scale 1: at most a quarter of that.
  const exoTimeScale = Math.min(args.timeScale, 0.25);
  log(`serving through exobar on exo: proxy overhead, stream ratio, the stall with the hold on and off (time scale ${exoTimeScale})`);
  const exo = await measureExoProxy({ timeScale: exoTimeScale, trials: args.trials, progress: log });
  const fair = await measureFairSection(args.timeScale, args.trials, log);
  const sharing = await measureSharingCheck(args.timeScale, log);
  const metrics = await measureMetricsSection(args, log);
  log(`models on demand: cold and warm TTFT through the API with the openai client, ${args.trials} trials`);
  const onDemand = await measureOnDemandTtft(args.timeScale, args.trials, log);
  log('structured output: decode tokens/s with a JSON schema over without, real MLX (tiny qwen3)');
  const structured = await measureStructuredDecode(args.trials, log);

  if (args.json) {
    const apiJson = {
      api_overhead_ms_median: api.api_overhead_ms_median,
      stream_tokens_per_s: api.stream_tokens_per_s,
      api: { ...api, stall: apiStall },
    };
    const exoJson = {
      exo_poll_cpu_percent: exoPoll.exo_poll_cpu_percent,
      exo_poll: exoPoll,
      exo_proxy_overhead_ms_median: exo.exo_proxy_overhead_ms_median,
      exo_proxy_stream_ratio: exo.exo_proxy_stream_ratio,
      exo_hold_ttft_s: exo.exo_hold_ttft_s,
      exo_no_hold_ttft_s: exo.exo_no_hold_ttft_s,
      exo_busy_ttft_s: exo.exo_busy_ttft_s,
      exo_proxy: exo,
    };
    process.stdout.write(
      `${JSON.stringify({ time_scale: args.timeScale, ...stall, ratios, ...apiJson, ...runtime, ...exoJson, ...fair.json, ...sharing.json, ...metrics.json, ...onDemand.json, ...structured }, null, 2)}\n`,
    );
    return;
  }
  const rows = STALL_CONDITIONS.map((c) => [c, stall.ttft[c].median_s.toFixed(3), stall.ttft[c].trials.map((t) => t.toFixed(3)).join(' '), EXPECTED[c]!]);
  printTable(['condition', 'TTFT median (s; 3B in batch_full)', 'trials (s)', 'expected'], rows);
  process.stdout.write(
    `\nqueued_exobar / busy = ${ratios.queued_exobar_over_busy} (target <= 1.2)\n` +
      `queued_baseline / busy = ${ratios.queued_baseline_over_busy} (target >= 5)\n` +
      `batch_full_exobar / busy = ${ratios.batch_full_exobar_over_busy} (target <= 1.2)\n` +
      `batch_full_baseline / busy = ${ratios.batch_full_baseline_over_busy} (as measured: exo's behaviour)\n` +
      `(times in calibrated seconds: measured / time scale ${args.timeScale})\n`,
  );

  process.stdout.write('\nlocal API\n');
  const stallCell = (c: (typeof API_STALL_CONDITIONS)[number]) =>
    `${apiStall.ttft[c].median_s.toFixed(3)} s (node ${apiStall.ttft[c].node_median_s.toFixed(3)} s)`;
  printTable(
    ['measure', 'value', 'target'],
    [
      [
        'api_overhead_ms_median',
        `${api.api_overhead_ms_median.toFixed(2)} ms (p95 ${api.api_overhead_ms_p95.toFixed(2)} ms, ${api.api_overhead_requests} requests)`,
        '< 5 ms',
      ],
      ['client / node TTFT median', `${api.client_ttft_ms_median.toFixed(1)} / ${api.node_ttft_ms_median.toFixed(1)} ms`, ''],
      [
        'stream_tokens_per_s',
        `${api.stream_tokens_per_s.toFixed(0)} (${api.stream.streams_per_model} streams x ${api.stream.models.length} models; node direct ${api.stream.node_direct_tokens_per_s.toFixed(0)})`,
        'API / direct ~ 1',
      ],
      ...API_STALL_CONDITIONS.map((c) => [`1B TTFT ${c}, openai client`, stallCell(c), c === 'queued' ? 'within 1.2x of busy' : '']),
      ['queued / busy through the API', apiStall.queued_over_busy.toFixed(3), '<= 1.2'],
    ],
  );

  process.stdout.write('\nruntime (built = what ships; tsx = the TypeScript sources, for contrast)\n');
  printTable(['measure', 'built', 'tsx', 'target'], runtimeRows(runtime));

  process.stdout.write('\nattach mode\n');
  printTable(['measure', 'value', 'target'], [...exoPollRows(exoPoll), ...exoProxyRows(exo)]);
  process.stdout.write(`(exo stall times in calibrated seconds: measured / time scale ${exoTimeScale})\n`);

  process.stdout.write('\nfair sharing of one GPU (B streams while A prefills; policy off and decode_first in one run)\n');
  printTable(['measure', 'value', 'target'], fair.rows);
  process.stdout.write('\nGPU sharing check (B decodes while A prefills)\n');
  printTable(['measure', 'value', 'target'], sharing.rows);
  process.stdout.write('\nmetrics and the request log\n');
  printTable(['measure', 'value', 'target'], metrics.rows);
  process.stdout.write('\nmodels on demand (a cold model loads for its request; through the API, openai client)\n');
  printTable(['measure', 'value', 'target'], onDemand.rows);
  process.stdout.write('\nstructured output (constrained decoding by llguidance, real MLX)\n');
  printTable(['measure', 'value', 'target'], structuredRows(structured));
}

function structuredRows(s: StructuredDecode): string[][] {
  const d = s.structured_decode;
  if (s.structured_decode_ratio === null) return [['structured_decode_ratio', 'n/a', d.source]];
  return [
    ['structured_decode_ratio', `${s.structured_decode_ratio.toFixed(3)} (schema ${d.schema_tokens_per_s} / free ${d.free_tokens_per_s} tok/s)`, `${d.model}, ${d.source}`],
    ['first token, schema / free', `${d.schema_ttft_ms} / ${d.free_ttft_ms} ms`, ''],
  ];
}

/** `metrics_scrape_ms` and the request log's cost on the API overhead (log on and off, one run). */
async function measureMetricsSection(args: BenchArgs, log: (line: string) => void) {
  log('metrics: one scrape of /metrics with 16 instances and 10,000 observed requests');
  const scrape = await measureMetricsScrape(Math.max(args.trials, 5) * 4, log);
  log(`request log: api overhead with the log on (full, 10,000 rows) and off, time scale ${args.timeScale}`);
  const cost = await measureRequestLogCost(args.timeScale, Math.max(args.trials, 3) * 20, log);
  const c = cost.request_log_cost;
  const rows = [
    [
      'metrics_scrape_ms',
      `${scrape.metrics_scrape_ms.toFixed(2)} ms (p95 ${scrape.metrics_scrape.p95_ms.toFixed(2)} ms, ${scrape.metrics_scrape.series} series, ${scrape.metrics_scrape.bytes} bytes)`,
      '',
    ],
    [
      'api_overhead_ms_median_request_log_on',
      `${cost.api_overhead_ms_median_request_log_on.toFixed(2)} ms (whole request ${c.request_ms_median_on.toFixed(1)} ms)`,
      'within ~1 ms of off',
    ],
    [
      'api_overhead_ms_median_request_log_off',
      `${cost.api_overhead_ms_median_request_log_off.toFixed(2)} ms (whole request ${c.request_ms_median_off.toFixed(1)} ms)`,
      '',
    ],
  ];
  return { json: { metrics_scrape_ms: scrape.metrics_scrape_ms, metrics_scrape: scrape.metrics_scrape, ...cost }, rows };
}

function printTable(header: string[], rows: string[][], out: NodeJS.WritableStream = process.stdout): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  out.write(`${line(header)}\n|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|\n`);
  for (const row of rows) out.write(`${line(row)}\n`);
}

const round = (x: number) => Math.round(x * 1000) / 1000;

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
