/**
 * `npm run bench`: exobar's benchmarks in one run. Prints a table, or with `--json`
 * only JSON. `--time-scale X` scales the sim (1 = calibrated real time), `--trials N`.
 */
import { measureStall, STALL_CONDITIONS } from './stall-scenario';

interface BenchArgs {
  json: boolean;
  timeScale: number;
  trials: number;
}

function parseArgs(argv: string[]): BenchArgs {
  const args: BenchArgs = { json: false, timeScale: 1, trials: 3 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--json') args.json = true;
    else if (arg === '--time-scale' || arg === '--trials') {
      const value = Number(argv[++i]);
      if (!Number.isFinite(value) || value <= 0) fail(`${arg} needs a positive number`);
      if (arg === '--time-scale') args.timeScale = value;
      else args.trials = Math.round(value);
    } else fail(`unknown argument "${arg}"`);
  }
  return args;
}

function fail(message: string): never {
  process.stderr.write(`bench: ${message}\nusage: npm run bench -- [--json] [--time-scale X] [--trials N]\n`);
  process.exit(2);
}

const EXPECTED: Record<string, string> = {
  alone: 'about 0.23 s (exo: 0.23)',
  busy: 'about 0.38-0.40 s (exo: 0.38-0.40)',
  queued_baseline: 'stalls, >= 5x busy (exo: 15.1-15.7)',
  queued_exobar: 'within 1.2x of busy (exo: 0.34-0.42)',
};

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const log = (line: string) => {
    if (!args.json) process.stderr.write(`  ${line}\n`);
  };
  log(`supervisor stall scenario, time scale ${args.timeScale}, ${args.trials} trials per condition`);
  const stall = await measureStall(args.timeScale, args.trials, log);
  const busy = stall.ttft.busy.median_s;
  const ratios = {
    queued_exobar_over_busy: round(stall.ttft.queued_exobar.median_s / busy),
    queued_baseline_over_busy: round(stall.ttft.queued_baseline.median_s / busy),
  };

  if (args.json) {
    process.stdout.write(`${JSON.stringify({ time_scale: args.timeScale, ...stall, ratios }, null, 2)}\n`);
    return;
  }
  const rows = STALL_CONDITIONS.map((c) => [c, stall.ttft[c].median_s.toFixed(3), stall.ttft[c].trials.map((t) => t.toFixed(3)).join(' '), EXPECTED[c]!]);
  printTable(['condition', '1B TTFT median (s)', 'trials (s)', 'expected'], rows);
  process.stdout.write(
    `\nqueued_exobar / busy = ${ratios.queued_exobar_over_busy} (target <= 1.2)\n` +
      `queued_baseline / busy = ${ratios.queued_baseline_over_busy} (target >= 5)\n` +
      `(times in calibrated seconds: measured / time scale ${args.timeScale})\n`,
  );
}

function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  process.stdout.write(`${line(header)}\n|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|\n`);
  for (const row of rows) process.stdout.write(`${line(row)}\n`);
}

const round = (x: number) => Math.round(x * 1000) / 1000;

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
