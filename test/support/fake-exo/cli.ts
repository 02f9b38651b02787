/**
 * `npm run fake-exo -- --port N [--scenario demo|bench] [--tick-ms MS]`: the fake exo
 * by hand. The demo shows two models on one Mac, a queue, a pending cancellation and
 * a failed runner on a second Mac, and keeps moving every tick. Prints one line,
 * `fake exo listening on http://127.0.0.1:PORT`, then serves until killed.
 */
import { startFakeExo } from './fake-exo-server';
import { benchCluster, demoCluster, demoTick } from './scenarios';

interface CliArgs {
  port: number;
  scenario: 'demo' | 'bench';
  tickMs: number;
}

function parseArgs(argv: string[]): CliArgs {
  const args: CliArgs = { port: 52415, scenario: 'demo', tickMs: 1000 };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[++i];
    if (flag === '--port' && value !== undefined && /^\d+$/.test(value)) args.port = Number(value);
    else if (flag === '--scenario' && (value === 'demo' || value === 'bench')) args.scenario = value;
    else if (flag === '--tick-ms' && value !== undefined && /^\d+$/.test(value)) args.tickMs = Number(value);
    else {
      process.stderr.write(
        `fake-exo: bad argument ${flag ?? ''} ${value ?? ''}\nusage: npm run fake-exo -- [--port N] [--scenario demo|bench] [--tick-ms MS]\n`,
      );
      process.exit(2);
    }
  }
  return args;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const cluster = args.scenario === 'demo' ? demoCluster() : benchCluster();
  const fake = await startFakeExo({ cluster, port: args.port });
  process.stdout.write(`fake exo listening on ${fake.url} (node ${cluster.nodeId}, scenario ${args.scenario})\n`);
  let tick = 0;
  const timer = args.tickMs > 0 ? setInterval(() => (args.scenario === 'demo' ? demoTick(cluster, ++tick) : cluster.step()), args.tickMs) : null;
  const stop = () => {
    if (timer) clearInterval(timer);
    void fake.close().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

void main();
