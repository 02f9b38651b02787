/**
 * `exobar serve` as a real process for the CLI tests: bin/exobar.js running the built
 * out/node/exobar.mjs, port 0 (never the default port, whatever listens there), the
 * built sim runners, its own process group (so a test can kill it and its runners).
 * Resolves once it has printed its address and token.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const EXOBAR_BIN = join(import.meta.dirname, '..', '..', 'bin', 'exobar.js');

export interface ServeProcess {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: string | null }>;
  url: string;
  token: string;
  stderr(): string;
}

export async function startServeProcess(dataDir: string, extraArgs: string[] = ['--sim-time-scale', '0.1']): Promise<ServeProcess> {
  const child = spawn(process.execPath, [EXOBAR_BIN, 'serve', '--port', '0', '--data-dir', dataDir, ...extraArgs], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    env: { ...process.env, EXOBAR_TOKEN: '' },
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const lines: string[] = [];
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      if (lines.length === 2) resolve();
    });
    void exited.then(() => reject(new Error(`exobar serve exited early: ${stderr}`)));
  });
  const url = /^exobar listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(lines[0]!)?.[1];
  // The second line is the page's address with the token in its fragment.
  const token = url && lines[1]!.startsWith(`open ${url}/#token=`) ? /#token=([A-Za-z0-9_-]+)$/.exec(lines[1]!)?.[1] : undefined;
  if (!url || !token) throw new Error(`exobar serve printed ${JSON.stringify(lines)}`);
  return { child, exited, url, token, stderr: () => stderr };
}

/** SIGKILLs the serve process's group if it still runs (a test that failed before its clean stop). */
export function killServeProcess(serve: ServeProcess): void {
  const { child } = serve;
  if (child.exitCode !== null || child.signalCode !== null || !child.pid) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // Gone already.
  }
}
