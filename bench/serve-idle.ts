/**
 * `exobar serve` at rest: its resident set size and CPU while nothing happens (no
 * runner, no browser, no request), which is how it spends most of its life on an
 * operator's Mac. Started as an operator starts it, `node bin/exobar.js serve`, so it
 * is the built command line that is measured; the same through tsx shows what running
 * the sources costs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { packageRoot } from '../electron/core/package-root';
import { cpuTimeMs, MB, rssBytes } from './process-stats';
import { sleep } from '../test/support/eventually';

/**
 * Startup work settles within this: the MLX runtime lookup (each Python candidate probed in
 * a child), the look for an exo on this Mac to offer, the orphan scan. Measured here, the
 * first ~13 s after listening cost ~1.5 % of a core and every 10 s after it 0.2-0.3 %:
 * idle is what comes after.
 */
const SETTLE_MS = 15_000;

export interface ServeIdleResult {
  runtime: 'built' | 'tsx';
  /** How long the process was watched, s. */
  window_s: number;
  /** Largest RSS seen in the window, MB. */
  rss_mb: number;
  /** CPU time over the window / the window, % of one core. */
  cpu_percent: number;
}

/** The command line that starts `exobar serve` for a runtime; null for tsx when tsx is not installed. */
function serveCommand(runtime: 'built' | 'tsx', flags: string[]): string[] | null {
  const root = packageRoot();
  if (runtime === 'built') return [join(root, 'bin', 'exobar.js'), 'serve', ...flags];
  let tsx: string;
  try {
    tsx = import.meta.resolve('tsx');
  } catch {
    return null;
  }
  const cli = JSON.stringify(join(root, 'electron', 'cli', 'cli.ts'));
  const script = `const { main } = await import(${cli}); process.exit(await main(${JSON.stringify(['serve', ...flags])}));`;
  return ['--import', tsx, '--input-type=module', '-e', script];
}

function waitForListening(child: ChildProcess): Promise<void> {
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('exobar listening on ')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`exobar serve exited (${code}) before listening:\n${stderr}`)));
  });
}

/** Starts `exobar serve --port 0`, lets it settle, then watches it for `windowMs`. */
export async function measureServeIdle(options: {
  windowMs: number;
  runtime?: 'built' | 'tsx';
  /** How long start-up may take before idle is measured (default SETTLE_MS). */
  settleMs?: number;
  progress?: (line: string) => void;
}): Promise<ServeIdleResult> {
  const runtime = options.runtime ?? 'built';
  const dataDir = mkdtempSync(join(tmpdir(), 'exobar-bench-serve-'));
  const args = serveCommand(runtime, ['--port', '0', '--data-dir', dataDir]);
  if (!args) throw new Error('tsx is not installed');
  const child = spawn(process.execPath, args, { cwd: packageRoot(), stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, EXOBAR_LOG_LEVEL: 'warn' } });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await waitForListening(child);
    await sleep(options.settleMs ?? SETTLE_MS);
    const pid = child.pid!;
    const cpuBefore = cpuTimeMs(pid);
    const startedAt = performance.now();
    let maxRss = 0;
    while (performance.now() - startedAt < options.windowMs) {
      maxRss = Math.max(maxRss, rssBytes(pid) ?? 0);
      await sleep(500);
    }
    const cpuAfter = cpuTimeMs(pid);
    const elapsed = performance.now() - startedAt;
    if (cpuBefore == null || cpuAfter == null || maxRss === 0) throw new Error('could not read the CPU time or RSS of exobar serve');
    const result: ServeIdleResult = {
      runtime,
      window_s: Math.round(elapsed / 100) / 10,
      rss_mb: Math.round((maxRss / MB) * 10) / 10,
      cpu_percent: Math.round(((cpuAfter - cpuBefore) / elapsed) * 100 * 100) / 100,
    };
    options.progress?.(`${runtime} exobar serve, idle ${result.window_s} s: RSS ${result.rss_mb} MB, CPU ${result.cpu_percent} %`);
    return result;
  } finally {
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
