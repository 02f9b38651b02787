/**
 * `npm run fake-exo` as a real child process for the browser tests: the demo cluster
 * on a given port, stopped (the exo node lost) and started again on the same port
 * (exo restarted: new node ids).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

export interface FakeExoProcess {
  url: string;
  port: number;
  output(): string;
  stop(): Promise<void>;
}

/** A port free right now on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Starts the fake exo's demo on `port` and resolves once it listens. */
export async function startFakeExoProcess(port: number, timeoutMs = 30_000): Promise<FakeExoProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'test/support/fake-exo/cli.ts', '--port', String(port)], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout?.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (log += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };
  const deadline = Date.now() + timeoutMs;
  while (!/fake exo listening on (http:\/\/\S+)/.test(log)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`the fake exo did not start:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url: `http://127.0.0.1:${port}`, port, output: () => log, stop };
}
