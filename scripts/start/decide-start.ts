/**
 * What `npm start` does: launch the Electron app when its binary is there, else run
 * `exobar serve` (the same core, its page in a browser). The Electron binary is not
 * in the npm package: electron's index.js downloads it on first use, which fails on a
 * machine without internet access.
 */

/** What asking for the Electron binary gave. */
export type ElectronProbe = { ok: true; path: string } | { ok: false; reason: string };

export type StartPlan = { mode: 'electron'; electronPath: string } | { mode: 'serve'; reason: string };

/** Pure decision: the app when the binary exists, else the serve fallback with the reason. */
export function decideStart(probe: ElectronProbe, exists: (path: string) => boolean): StartPlan {
  if (!probe.ok) return { mode: 'serve', reason: probe.reason };
  if (!exists(probe.path)) return { mode: 'serve', reason: `the Electron binary is missing at ${probe.path}` };
  return { mode: 'electron', electronPath: probe.path };
}

/** What `npm start` says while asking electron for its binary takes long (a first run downloads it). */
export const SLOW_PROBE_LINE = 'exobar: fetching the Electron binary (first run only)...';

/** The one line `npm start` prints when it falls back. */
export function fallbackLine(reason: string): string {
  return `exobar: cannot start the Electron app (${reason}); running "exobar serve" instead, open the address it prints.`;
}

/** The first line of an error message, without electron's advice to reinstall. */
export function probeFailureReason(stderr: string, code: number | null, timedOut: boolean): string {
  if (timedOut) return 'downloading the Electron binary timed out';
  const lines = stderr.split('\n').map((l) => l.trim());
  const failed = lines.find((l) => /Electron failed to install correctly/.test(l));
  if (failed) return 'the Electron binary is not installed and could not be downloaded';
  const error = lines.find((l) => /^(Error|TypeError|RequestError)\b/.test(l));
  return error ? `the Electron binary is not available: ${error}` : `the Electron binary is not available (exit code ${code})`;
}
