/**
 * exobar's own CPU while attached to exo: `exo_poll_cpu_percent`, the CPU time this
 * process spends polling a fake exo at 2 Hz (and every 5 s for the node sections),
 * parsing, tracking and building the view after every round, as a percentage of one
 * core. The fake exo runs in a child process holding real-size states (4 Macs, each
 * with 125 entries in `downloads` as a real node has, about 130 KB a Mac, read every
 * 5 s; 4 instances, 50 requests) so its own work (it serializes the whole State for
 * every request, as exo does) is not counted. Target: under 1 %.
 *
 * `node --import tsx bench/exo-poll-cpu.ts [--json] [--seconds N]`
 */
import { ExoMonitor } from '../electron/core/exo/exo-monitor';
import { startFakeExoProcess } from '../test/support/fake-exo/fake-exo-process';

export interface ExoPollCpuResult {
  exo_poll_cpu_percent: number;
  seconds: number;
  poll_rounds: number;
  good_rounds: number;
  poll_errors: number;
  parse_errors: number;
  instances: number;
  queued_requests: number;
  nodes: number;
}

export const EXO_POLL_CPU_TARGET_PERCENT = 1;

/** Measures exobar's CPU while attached at 2 Hz for `seconds` (after a 2 s warm-up). */
export async function measureExoPollCpu(seconds = 10, progress: (line: string) => void = () => undefined): Promise<ExoPollCpuResult> {
  const fake = await startFakeExoProcess('bench');
  const { url } = fake;
  let rounds = 0;
  const monitor = new ExoMonitor({
    url,
    exoLogPath: null,
    onUpdate: () => {
      rounds++;
      // What the snapshot broadcaster does after every poll.
      monitor.view();
    },
  });
  try {
    monitor.start();
    progress(`attached to the fake exo at ${url}; warming up 2 s`);
    await new Promise((r) => setTimeout(r, 2_000));
    const roundsBefore = rounds;
    const goodBefore = monitor.client.connection.pollErrors;
    const cpuBefore = process.cpuUsage();
    const wallBefore = performance.now();
    progress(`measuring for ${seconds} s`);
    await new Promise((r) => setTimeout(r, seconds * 1_000));
    const cpu = process.cpuUsage(cpuBefore);
    const wallMs = performance.now() - wallBefore;
    const view = monitor.view();
    const pollErrors = monitor.client.connection.pollErrors - goodBefore;
    return {
      exo_poll_cpu_percent: Math.round(((cpu.user + cpu.system) / 1_000 / wallMs) * 100 * 1_000) / 1_000,
      seconds: Math.round(wallMs) / 1_000,
      poll_rounds: rounds - roundsBefore,
      good_rounds: rounds - roundsBefore - pollErrors,
      poll_errors: pollErrors,
      parse_errors: view.section.parseErrors,
      instances: view.instances.length,
      queued_requests: view.instances.reduce((n, i) => n + i.queue.requests.length, 0),
      nodes: view.section.nodes.length,
    };
  } finally {
    await monitor.stop();
    await fake.stop();
  }
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
  const load = `${result.nodes} Macs, ${result.instances} instances, ${result.queued_requests} queued, ${result.poll_rounds} rounds`;
  process.stdout.write(
    `measure                 | value      | target  | load\n` +
      `exo_poll_cpu_percent    | ${result.exo_poll_cpu_percent.toFixed(3).padEnd(8)} % | < ${EXO_POLL_CPU_TARGET_PERCENT} %   | ${load}\n`,
  );
}

// Run as a script only: inside the built bench bundle import.meta.url is the bundle's own, and main would run there too.
if (process.argv[1]?.endsWith('exo-poll-cpu.ts')) void main();
