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
import { ExoMonitor } from '../electron/core/exo/attach/exo-monitor';
import { FAST_PATHS, SLOW_SECTIONS } from '../electron/core/exo/attach/exo-client';
import { DEFAULT_EXO_HTTP, exoAgent, getExoJsonIfChanged } from '../electron/core/exo/attach/exo-http';
import { startFakeExoProcess } from '../test/support/fake-exo';
import { sleep } from '../test/support/eventually';
import { median } from '../test/support/median';

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
   * The client's requests on its schedule at rest with nothing parsed, tracked or viewed:
   * the part of exo_poll_cpu_percent that is HTTP on this host, not exobar's own work.
   */
  exo_poll_transport_cpu_percent: number;
  /** shipped / transport, within this run: 1 means the poller costs no more than its requests. */
  shipped_over_transport: number;
  transport: ExoPollPhase;
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

/** A phase's figures from its windows and what its rounds counted. */
function phaseOf(percents: number[], wallMs: number, rounds: number, pollErrors: number, parseErrors: number): ExoPollPhase {
  return {
    cpu_percent: round3(median(percents)),
    cpu_percent_windows: percents,
    seconds: Math.round(wallMs) / 1_000,
    poll_rounds: rounds,
    good_rounds: rounds - pollErrors,
    poll_errors: pollErrors,
    parse_errors: parseErrors,
  };
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
    const phase = phaseOf(percents, wallMs, rounds - roundsBefore, monitor.client.connection.pollErrors - errorsBefore, view.section.parseErrors);
    return { phase, view };
  } finally {
    await monitor.stop();
  }
}

/**
 * The client's requests at rest, bare: `/state/runners` and `/state/tasks` together every
 * 500 ms; `/node_id`, the node sections and `downloads` one after another every 5 s
 * (instances are re-read only when runners or tasks change, so not at rest). Bodies are
 * compared with the last as the client does, and nothing is parsed, tracked or viewed.
 */
async function transportPhase(url: string, windows: number, windowSeconds: number): Promise<ExoPollPhase> {
  const base = new URL(url);
  const agent = exoAgent(base);
  const last = new Map<string, Buffer>();
  let rounds = 0;
  let errors = 0;
  const get = async (path: string) => {
    const result = await getExoJsonIfChanged(base, path, agent, DEFAULT_EXO_HTTP, last.get(path) ?? null);
    if (!result.ok) errors++;
    else if (!result.unchanged) last.set(path, result.body);
  };
  const fastPaths = FAST_PATHS.filter((path) => path !== '/state/instances');
  let running = true;
  let slowAt = -Infinity;
  const loop = (async () => {
    while (running) {
      const startedAt = performance.now();
      if (startedAt - slowAt >= 5_000) {
        slowAt = startedAt;
        for (const path of ['/node_id', ...SLOW_SECTIONS.map((s) => `/state/${s}`), '/state/downloads']) await get(path);
      }
      await Promise.all(fastPaths.map(get));
      rounds++;
      await sleep(Math.max(0, 500 - (performance.now() - startedAt)));
    }
  })();
  try {
    await sleep(WARM_UP_MS);
    const roundsBefore = rounds;
    const errorsBefore = errors;
    const { percents, wallMs } = await cpuWindows(windows, windowSeconds);
    return phaseOf(percents, wallMs, rounds - roundsBefore, errors - errorsBefore, 0);
  } finally {
    running = false;
    await loop;
    agent.destroy();
  }
}

/**
 * Measures, against one fake exo: the idle floor, attached as shipped, the bare transport,
 * attached with every section parsed on every poll, the idle floor again; each attached phase after a 10 s
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
    progress(`${windows} x ${windowSeconds} s of the same requests with nothing parsed (the transport)`);
    const transport = await transportPhase(fake.url, windows, windowSeconds);
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
      exo_poll_transport_cpu_percent: transport.cpu_percent,
      shipped_over_transport: transport.cpu_percent > 0 ? round3(shipped.phase.cpu_percent / transport.cpu_percent) : 0,
      transport,
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
    [
      'exo_poll_transport_cpu_percent',
      `${result.exo_poll_transport_cpu_percent.toFixed(3)} % (the same requests, nothing parsed; shipped is ${result.shipped_over_transport}x this)`,
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
