/**
 * exobar's own CPU while attached to exo: `exo_poll_cpu_percent`, the CPU time this
 * process spends polling a fake exo at 2 Hz (and every 5 s for the node sections and
 * `downloads`), parsing, tracking and building the view after every round, as a
 * percentage of one core. The fake exo runs in a child process holding real-size
 * states (4 Macs, each with 125 entries in `downloads` as a real node has, about 130 KB
 * a Mac; 4 instances, 50 requests: `/state/tasks` is about 115 KB) so its own work (it
 * serializes the whole State for every request, as exo does) is not counted.
 * Target: under 1 %.
 *
 * One run measures three phases in turn against the same fake exo, so their ratios
 * hold on a loaded machine: attached as exobar ships (a section whose bytes did not
 * change since the last poll is not parsed again), attached with every section parsed
 * on every poll (what exobar did before; the cost when exo's state changes every
 * poll), and the process with nothing attached (the floor every phase includes).
 *
 * `node --import tsx bench/exo-poll-cpu.ts [--json] [--seconds N]`
 */
import { ExoMonitor } from '../electron/core/exo/exo-monitor';
import { startFakeExoProcess } from '../test/support/fake-exo/fake-exo-process';
import { sleep } from '../test/support/eventually';

export interface ExoPollPhase {
  cpu_percent: number;
  seconds: number;
  poll_rounds: number;
  good_rounds: number;
  poll_errors: number;
  parse_errors: number;
}

export interface ExoPollCpuResult extends ExoPollPhase {
  exo_poll_cpu_percent: number;
  /** Every section parsed on every poll (nothing skipped): the cost of a state that changes all the time. */
  exo_poll_reparse_cpu_percent: number;
  /** The same process with nothing attached. */
  exo_poll_idle_cpu_percent: number;
  /** reparse / shipped, within this run. */
  reparse_over_shipped: number;
  reparse: ExoPollPhase;
  instances: number;
  queued_requests: number;
  nodes: number;
}

export const EXO_POLL_CPU_TARGET_PERCENT = 1;

const WARM_UP_MS = 2_000;
const round3 = (n: number) => Math.round(n * 1_000) / 1_000;

function measureCpu(seconds: number): Promise<{ percent: number; wallMs: number }> {
  const cpuBefore = process.cpuUsage();
  const wallBefore = performance.now();
  return new Promise((resolve) =>
    setTimeout(() => {
      const cpu = process.cpuUsage(cpuBefore);
      const wallMs = performance.now() - wallBefore;
      resolve({ percent: round3(((cpu.user + cpu.system) / 1_000 / wallMs) * 100), wallMs });
    }, seconds * 1_000),
  );
}

async function attachedPhase(url: string, seconds: number, reparseUnchanged: boolean) {
  let rounds = 0;
  const monitor = new ExoMonitor({
    url,
    exoLogPath: null,
    reparseUnchanged,
    onUpdate: () => {
      rounds++;
      // What the snapshot broadcaster does after every poll.
      monitor.view();
    },
  });
  try {
    monitor.start();
    await sleep(WARM_UP_MS);
    const roundsBefore = rounds;
    const errorsBefore = monitor.client.connection.pollErrors;
    const { percent, wallMs } = await measureCpu(seconds);
    const view = monitor.view();
    const pollErrors = monitor.client.connection.pollErrors - errorsBefore;
    const phase: ExoPollPhase = {
      cpu_percent: percent,
      seconds: Math.round(wallMs) / 1_000,
      poll_rounds: rounds - roundsBefore,
      good_rounds: rounds - roundsBefore - pollErrors,
      poll_errors: pollErrors,
      parse_errors: view.section.parseErrors,
    };
    return { phase, view };
  } finally {
    await monitor.stop();
  }
}

/** Measures the three phases, `seconds` each (after a 2 s warm-up each). */
export async function measureExoPollCpu(seconds = 10, progress: (line: string) => void = () => undefined): Promise<ExoPollCpuResult> {
  const fake = await startFakeExoProcess('bench');
  try {
    progress(`attached to the fake exo at ${fake.url}: ${seconds} s as shipped`);
    const shipped = await attachedPhase(fake.url, seconds, false);
    progress(`${seconds} s parsing every section on every poll`);
    const reparse = await attachedPhase(fake.url, seconds, true);
    progress(`${seconds} s with nothing attached`);
    await sleep(WARM_UP_MS);
    const idle = await measureCpu(seconds);
    const { view } = shipped;
    return {
      exo_poll_cpu_percent: shipped.phase.cpu_percent,
      exo_poll_reparse_cpu_percent: reparse.phase.cpu_percent,
      exo_poll_idle_cpu_percent: idle.percent,
      reparse_over_shipped: shipped.phase.cpu_percent > 0 ? round3(reparse.phase.cpu_percent / shipped.phase.cpu_percent) : 0,
      ...shipped.phase,
      reparse: reparse.phase,
      instances: view.instances.length,
      queued_requests: view.instances.reduce((n, i) => n + i.queue.requests.length, 0),
      nodes: view.section.nodes.length,
    };
  } finally {
    await fake.stop();
  }
}

/** The bench table's rows for attach mode's CPU. */
export function exoPollRows(result: ExoPollCpuResult): string[][] {
  const load = `${result.nodes} Macs, ${result.instances} instances, ${result.queued_requests} queued, ${result.poll_rounds} rounds, ${result.poll_errors} errors`;
  return [
    ['exo_poll_cpu_percent', `${result.exo_poll_cpu_percent.toFixed(3)} % (${load})`, `< ${EXO_POLL_CPU_TARGET_PERCENT} %`],
    [
      'exo_poll_reparse_cpu_percent',
      `${result.exo_poll_reparse_cpu_percent.toFixed(3)} % (every section parsed every poll; ${result.reparse_over_shipped}x shipped)`,
      'contrast',
    ],
    ['exo_poll_idle_cpu_percent', `${result.exo_poll_idle_cpu_percent.toFixed(3)} % (nothing attached: the floor)`, 'contrast'],
  ];
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const json = argv.includes('--json');
  const secondsAt = argv.indexOf('--seconds');
  const seconds = secondsAt >= 0 ? Number(argv[secondsAt + 1]) : 10;
  if (!Number.isFinite(seconds) || seconds <= 0) {
    process.stderr.write('usage: node --import tsx bench/exo-poll-cpu.ts [--json] [--seconds N]\n');
    process.exit(2);
  }
  const result = await measureExoPollCpu(seconds, (line) => {
    if (!json) process.stderr.write(`  ${line}\n`);
  });
  if (json) {
    process.stdout.write(`${JSON.stringify({ exo_poll_cpu_percent: result.exo_poll_cpu_percent, exo_poll: result }, null, 2)}\n`);
    return;
  }
  const rows = [['measure', 'value', 'target'], ...exoPollRows(result)];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const row of rows) process.stdout.write(`${row.map((c, i) => c.padEnd(widths[i]!)).join(' | ')}\n`);
}

// Run as a script only: inside the built bench bundle import.meta.url is the bundle's own, and main would run there too.
if (process.argv[1]?.endsWith('exo-poll-cpu.ts')) void main();
