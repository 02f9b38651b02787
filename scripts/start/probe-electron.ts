/**
 * Asks the electron package for its binary the way Electron's own CLI does
 * (`require('electron')` returns the executable's path, downloading it on first use),
 * in a child process so its download noise and stack traces stay out of the terminal.
 */
import { spawn } from 'node:child_process';
import type { ElectronProbe } from './decide-start';
import { probeFailureReason } from './decide-start';

export interface ProbeOptions {
  /** Directory whose node_modules holds electron (the project root). */
  cwd: string;
  env?: NodeJS.ProcessEnv;
  /** The first run downloads ~100 MB on a Mac; give it time. */
  timeoutMs?: number;
  /** Called once if the probe is still running after `slowAfterMs` (a download is under way). */
  onSlow?: () => void;
  slowAfterMs?: number;
}

const PROBE = "process.stdout.write('\\nELECTRON_PATH=' + require('electron'))";

export function probeElectron(options: ProbeOptions): Promise<ElectronProbe> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-e', PROBE], { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const slow = setTimeout(() => options.onSlow?.(), options.slowAfterMs ?? 2_000);
    const timeout = setTimeout(
      () => {
        timedOut = true;
        child.kill('SIGKILL');
      },
      options.timeoutMs ?? 10 * 60_000,
    );
    child.once('error', (error) => {
      clearTimeout(slow);
      clearTimeout(timeout);
      resolve({ ok: false, reason: `could not ask the electron package: ${error.message}` });
    });
    child.once('close', (code) => {
      clearTimeout(slow);
      clearTimeout(timeout);
      const match = /ELECTRON_PATH=(.*)$/.exec(stdout);
      if (code === 0 && match?.[1]) resolve({ ok: true, path: match[1].trim() });
      else resolve({ ok: false, reason: probeFailureReason(stderr, code, timedOut) });
    });
  });
}
