/**
 * The fake exo in a child process (`cli.ts`), for the benchmark (so its CPU is not
 * counted as exobar's) and for tests of `npm run fake-exo` itself.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { packageRoot } from '../../../electron/core/package-root';

// From the package root, not this module: in the built bench (out/node/bench.mjs) import.meta.url is the bundle's.
const CLI = join(packageRoot(), 'test/support/fake-exo/cli.ts');

export interface FakeExoProcess {
  child: ChildProcess;
  url: string;
  /** Stops it (SIGTERM) and waits for the exit. */
  stop(): Promise<void>;
}

/**
 * Starts `cli.ts` with the given scenario on `port` (default: a free one); resolves once
 * it listens. A test that loses and regains the exo node starts it again on the same port.
 */
export function startFakeExoProcess(scenario: 'demo' | 'bench', tickMs = 1_000, port = 0): Promise<FakeExoProcess> {
  return spawnFakeExoCli(['--port', String(port), '--scenario', scenario, '--tick-ms', String(tickMs)]);
}

/** Starts `cli.ts --scenario serving` (chat completions from a `mode` worker) on a free port. */
export function startServingExoProcess(mode: 'blocking' | 'fixed', timeScale = 1): Promise<FakeExoProcess> {
  return spawnFakeExoCli(['--port', '0', '--scenario', 'serving', '--mode', mode, '--time-scale', String(timeScale)]);
}

function spawnFakeExoCli(args: string[]): Promise<FakeExoProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (match) {
        resolve({
          child,
          url: match[1]!,
          stop: async () => {
            if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
            await exited;
          },
        });
      }
    });
    child.once('exit', (code) => reject(new Error(`fake exo exited before listening (code ${code})`)));
    child.once('error', reject);
  });
}
