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
 * On a virtual machine one 10 s window of the same code read anywhere from 1 % to 9 %,
 * as neighbours on the host came and went; so each attached phase starts after a 10 s
 * warm-up and is the median of several 5 s windows, every window is reported, and a
 * fixed piece of work timed before and after (`host_reference_ms`) tells a slow host
 * from a slow poller.
 *
 * `node --import tsx bench/exo-poll-cpu.ts [--json] [--seconds N]` (N: seconds measured
 * per attached phase, default 30)
 */
import { ExoMonitor } from '../electron/core/exo/exo-monitor';
import { startFakeExoProcess } from '../test/support/fake-exo/fake-exo-process';
import { sleep } from '../test/support/eventually';

export interface ExoPollPhase {
  /** The median of the windows: one noisy window (a neighbour on the host, a GC) does not decide it. */
  cpu_percent: number;
  /** Every window's figure, in the order measured. */
  cpu_percent_windows: number[];
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
  /** The same process with nothing attached (the median of windows before and after). */
  exo_poll_idle_cpu_percent: number;
  /** exo_poll_cpu_percent less the idle floor: what attaching itself costs. */
  exo_poll_above_idle_cpu_percent: number;
  /** reparse / shipped, within this run. */
  reparse_over_shipped: number;
  /**
   * CPU ms of a fixed piece of work (parsing the fake's task list 20 times), the median of
   * runs before and after the phases: how fast this host was during the run, so figures of
   * runs on a slow and a fast host can be told apart.
   */
  host_reference_ms: number;
  reparse: ExoPollPhase;
  instances: number;
  queued_requests: number;
  nodes: number;
}

export interface ExoPollCpuOptions {
  /** Seconds a window (default 5). */
  windowSeconds?: number;
  /** Windows measured per attached phase (default 6; half as many idle windows before and after). */
  windows?: number;
}

export const EXO_POLL_CPU_TARGET_PERCENT = 1;

/**
 * Before a phase is measured: its first rounds parse every section whole (nothing to
 * compare with yet) and the JIT is still compiling the poller, costs a long-lived
 * attach pays once, not at 2 Hz.
 */
const WARM_UP_MS = 10_000;
/** After the fake exo starts, before the first idle window: the start-up's own garbage collections. */
const SETTLE_MS = 3_000;
const round3 = (n: number) => Math.round(n * 1_000) / 1_000;
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** This process's CPU time (all its threads) over one window, as a percentage of one core. */
async function cpuWindow(seconds: number): Promise<{ percent: number; wallMs: number }> {
  const cpuBefore = process.cpuUsage();
  const wallBefore = performance.now();
  await sleep(seconds * 1_000);
  const cpu = process.cpuUsage(cpuBefore);
  const wallMs = performance.now() - wallBefore;
  return { percent: round3(((cpu.user + cpu.system) / 1_000 / wallMs) * 100), wallMs };
}

async function cpuWindows(count: number, seconds: number): Promise<{ percents: number[]; wallMs: number }> {
  const percents: number[] = [];
  let wallMs = 0;
  for (let i = 0; i < count; i++) {
    const w = await cpuWindow(seconds);
    percents.push(w.percent);
    wallMs += w.wallMs;
  }
  return { percents, wallMs };
}

/** The host's speed: CPU ms to parse `body` 20 times, the median of 5 runs. */
function hostReferenceMs(body: string): number {
  const runs: number[] = [];
  for (let run = 0; run < 5; run++) {
    const before = process.cpuUsage();
    for (let i = 0; i < 20; i++) JSON.parse(body);
    const cpu = process.cpuUsage(before);
    runs.push((cpu.user + cpu.system) / 1_000);
  }
  return median(runs);
}

async function referenceBody(url: string): Promise<string> {
  const res = await fetch(new URL('/state/tasks', url));
  return res.text();
}

async function attachedPhase(url: string, windows: number, windowSeconds: number, reparseUnchanged: boolean) {
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
    const { percents, wallMs } = await cpuWindows(windows, windowSeconds);
    const view = monitor.view();
    const pollErrors = monitor.client.connection.pollErrors - errorsBefore;
    const phase: ExoPollPhase = {
      cpu_percent: round3(median(percents)),
      cpu_percent_windows: percents,
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

/**
 * Measures, against one fake exo: the idle floor, attached as shipped, attached with every
 * section parsed on every poll, the idle floor again; each attached phase after a 10 s
 * warm-up, each figure the median of its windows.
 */
export async function measureExoPollCpu(options: ExoPollCpuOptions = {}, progress: (line: string) => void = () => undefined): Promise<ExoPollCpuResult> {
  const windowSeconds = options.windowSeconds ?? 5;
  const windows = options.windows ?? 6;
  const idleWindows = Math.max(1, Math.ceil(windows / 2));
  const fake = await startFakeExoProcess('bench');
  try {
    const body = await referenceBody(fake.url);
    await sleep(SETTLE_MS);
    const referenceBefore = hostReferenceMs(body);
    progress(`fake exo at ${fake.url}: ${idleWindows} x ${windowSeconds} s with nothing attached`);
    const idleBefore = await cpuWindows(idleWindows, windowSeconds);
    progress(`${windows} x ${windowSeconds} s attached as shipped (after ${WARM_UP_MS / 1_000} s of warm-up)`);
    const shipped = await attachedPhase(fake.url, windows, windowSeconds, false);
    progress(`${windows} x ${windowSeconds} s parsing every section on every poll`);
    const reparse = await attachedPhase(fake.url, windows, windowSeconds, true);
    progress(`${idleWindows} x ${windowSeconds} s with nothing attached`);
    await sleep(SETTLE_MS);
    const idleAfter = await cpuWindows(idleWindows, windowSeconds);
    const referenceAfter = hostReferenceMs(body);
    const idle = round3(median([...idleBefore.percents, ...idleAfter.percents]));
    const { view } = shipped;
    return {
      exo_poll_cpu_percent: shipped.phase.cpu_percent,
      exo_poll_reparse_cpu_percent: reparse.phase.cpu_percent,
      exo_poll_idle_cpu_percent: idle,
      exo_poll_above_idle_cpu_percent: round3(Math.max(0, shipped.phase.cpu_percent - idle)),
      reparse_over_shipped: shipped.phase.cpu_percent > 0 ? round3(reparse.phase.cpu_percent / shipped.phase.cpu_percent) : 0,
      host_reference_ms: round3(median([referenceBefore, referenceAfter])),
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
    [
      'exo_poll_cpu_percent',
      `${result.exo_poll_cpu_percent.toFixed(3)} % (median of ${result.cpu_percent_windows.length} windows, ${Math.min(...result.cpu_percent_windows).toFixed(2)}-${Math.max(...result.cpu_percent_windows).toFixed(2)}; ${load})`,
      `< ${EXO_POLL_CPU_TARGET_PERCENT} %`,
    ],
    [
      'exo_poll_reparse_cpu_percent',
      `${result.exo_poll_reparse_cpu_percent.toFixed(3)} % (every section parsed every poll; ${result.reparse_over_shipped}x shipped)`,
      'contrast',
    ],
    ['exo_poll_idle_cpu_percent', `${result.exo_poll_idle_cpu_percent.toFixed(3)} % (nothing attached: the floor)`, 'contrast'],
    ['exo_poll_above_idle_cpu_percent', `${result.exo_poll_above_idle_cpu_percent.toFixed(3)} % (what attaching itself costs)`, 'contrast'],
    ['host_reference_ms', `${result.host_reference_ms.toFixed(1)} ms (20 parses of the task list: this host's speed in this run)`, 'context'],
  ];
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const json = argv.includes('--json');
  const secondsAt = argv.indexOf('--seconds');
  const seconds = secondsAt >= 0 ? Number(argv[secondsAt + 1]) : 30;
  if (!Number.isFinite(seconds) || seconds <= 0) {
    process.stderr.write('usage: node --import tsx bench/exo-poll-cpu.ts [--json] [--seconds N]\n');
    process.exit(2);
  }
  // --seconds is the time measured per attached phase, in 5 s windows.
  const result = await measureExoPollCpu({ windows: Math.max(1, Math.round(seconds / 5)) }, (line) => {
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
