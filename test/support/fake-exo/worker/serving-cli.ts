/**
 * `node --import tsx test/support/fake-exo/worker/serving-cli.ts [--port N]
 * [--mode blocking|fixed] [--time-scale X]`: the fake exo that serves chat completions
 * (the measured stall's Mac: Llama-3.2-1B and -3B ready on "studio-a"), in a process of
 * its own as exo is. Prints `fake exo listening on http://127.0.0.1:PORT`, then serves
 * until killed.
 */
import { startServingExo } from './serving-exo';
import type { WorkerMode } from './fake-worker';

function parseArgs(argv: string[]): { port: number; mode: WorkerMode; timeScale: number } {
  const args = { port: 52415, mode: 'blocking' as WorkerMode, timeScale: 1 };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[++i] ?? '';
    if (flag === '--port' && /^\d+$/.test(value)) args.port = Number(value);
    else if (flag === '--mode' && (value === 'blocking' || value === 'fixed')) args.mode = value;
    else if (flag === '--time-scale' && Number(value) > 0) args.timeScale = Number(value);
    else {
      process.stderr.write(
        `serving fake exo: bad argument ${flag ?? ''} ${value}\nusage: serving-cli.ts [--port N] [--mode blocking|fixed] [--time-scale X]\n`,
      );
      process.exit(2);
    }
  }
  return args;
}

const args = parseArgs(process.argv.slice(2));
const exo = await startServingExo({ port: args.port, mode: args.mode, timeScale: args.timeScale });
process.stdout.write(`fake exo listening on ${exo.url} (${args.mode} worker, time scale ${args.timeScale})\n`);
const stop = () => void exo.close().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
