/**
 * `npm run fake-exo -- --port N [--scenario demo|bench|serving] [--tick-ms MS]
 * [--mode blocking|fixed] [--time-scale X]`: the fake exo by hand, and in a process of
 * its own as exo is (fake-exo-process.ts starts it for the tests and the bench).
 * - demo: two models on one Mac, a queue, a pending cancellation and a failed runner on
 *   a second Mac; it keeps moving every tick.
 * - bench: the polling benchmark's cluster, stepped every tick.
 * - serving: the measured stall's Mac (Llama-3.2-1B and -3B ready on "studio-a") that
 *   serves chat completions with a `--mode` worker at `--time-scale`; it does not tick.
 * Prints one line, `fake exo listening on http://127.0.0.1:PORT (...)`, then serves
 * until killed.
 */
import { benchCluster, demoCluster, demoTick, startFakeExo, startServingExo, type FakeExo, type WorkerMode } from './index';

interface CliArgs {
  port: number;
  scenario: 'demo' | 'bench' | 'serving';
  tickMs: number;
  mode: WorkerMode;
  timeScale: number;
}

const USAGE = 'usage: npm run fake-exo -- [--port N] [--scenario demo|bench|serving] [--tick-ms MS] [--mode blocking|fixed] [--time-scale X]';

function parseArgs(argv: string[]): CliArgs {
  const args: CliArgs = { port: 52415, scenario: 'demo', tickMs: 1000, mode: 'blocking', timeScale: 1 };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[++i];
    if (flag === '--port' && value !== undefined && /^\d+$/.test(value)) args.port = Number(value);
    else if (flag === '--scenario' && (value === 'demo' || value === 'bench' || value === 'serving')) args.scenario = value;
    else if (flag === '--tick-ms' && value !== undefined && /^\d+$/.test(value)) args.tickMs = Number(value);
    else if (flag === '--mode' && (value === 'blocking' || value === 'fixed')) args.mode = value;
    else if (flag === '--time-scale' && Number(value) > 0) args.timeScale = Number(value);
    else {
      process.stderr.write(`fake-exo: bad argument ${flag ?? ''} ${value ?? ''}\n${USAGE}\n`);
      process.exit(2);
    }
  }
  return args;
}

/** Starts the scenario; returns the server, what to print after "listening on URL", and the tick (if any). */
async function startScenario(args: CliArgs): Promise<{ fake: FakeExo; about: string; tick: ((n: number) => void) | null }> {
  if (args.scenario === 'serving') {
    const fake = await startServingExo({ port: args.port, mode: args.mode, timeScale: args.timeScale });
    return { fake, about: `${args.mode} worker, time scale ${args.timeScale}`, tick: null };
  }
  const cluster = args.scenario === 'demo' ? demoCluster() : benchCluster();
  const fake = await startFakeExo({ cluster, port: args.port });
  const tick = args.scenario === 'demo' ? (n: number) => demoTick(cluster, n) : () => cluster.step();
  return { fake, about: `node ${cluster.nodeId}, scenario ${args.scenario}`, tick };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const { fake, about, tick } = await startScenario(args);
  process.stdout.write(`fake exo listening on ${fake.url} (${about})\n`);
  let ticks = 0;
  const timer = tick && args.tickMs > 0 ? setInterval(() => tick(++ticks), args.tickMs) : null;
  const stop = () => {
    if (timer) clearInterval(timer);
    void fake.close().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

void main();
