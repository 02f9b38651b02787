/**
 * Builds the page into out/renderer (what `exobar serve` serves at `/`), so the test
 * runs today's code. In a child process with NODE_ENV=production: vitest sets
 * NODE_ENV=test, and a vite build inside it would bundle React's development build,
 * several times slower, which would make the load measurement meaningless.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

export async function buildRenderer(): Promise<void> {
  // vite/bin is not in the package's exports: resolve the package root, then the bin beside it.
  const viteBin = join(dirname(createRequire(import.meta.url).resolve('vite/package.json')), 'bin', 'vite.js');
  let output = '';
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, [viteBin, 'build', '--config', 'renderer/vite.config.ts', '--logLevel', 'warn'], {
      cwd: repoRoot,
      env: { ...process.env, NODE_ENV: 'production' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', reject);
    child.once('exit', resolve);
  });
  if (code !== 0) throw new Error(`vite build of the renderer failed (exit ${code}):\n${output}`);
}
