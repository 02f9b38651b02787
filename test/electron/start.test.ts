import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { decideStart, fallbackLine, probeFailureReason, SLOW_PROBE_LINE } from '../../scripts/start/decide-start';
import { probeElectron } from '../../scripts/start/probe-electron';

const root = join(import.meta.dirname, '..', '..');
const scratch = mkdtempSync(join(tmpdir(), 'exobar-start-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A project directory whose node_modules/electron/index.js is `source`. */
function fakeElectronProject(name: string, source: string): string {
  const dir = join(scratch, name);
  mkdirSync(join(dir, 'node_modules', 'electron'), { recursive: true });
  writeFileSync(join(dir, 'node_modules', 'electron', 'package.json'), JSON.stringify({ name: 'electron', main: 'index.js' }));
  writeFileSync(join(dir, 'node_modules', 'electron', 'index.js'), source);
  return dir;
}

describe('npm start: the decision', () => {
  it('launches the app when the binary exists', () => {
    expect(decideStart({ ok: true, path: '/e/Electron' }, () => true)).toEqual({ mode: 'electron', electronPath: '/e/Electron' });
  });

  it('falls back to serve when require("electron") failed, or its path does not exist', () => {
    expect(decideStart({ ok: false, reason: 'no network' }, () => true)).toEqual({ mode: 'serve', reason: 'no network' });
    expect(decideStart({ ok: true, path: '/e/Electron' }, () => false)).toEqual({ mode: 'serve', reason: 'the Electron binary is missing at /e/Electron' });
  });

  it('says so in exactly one line', () => {
    const line = fallbackLine('the Electron binary is missing at /e/Electron');
    expect(line).not.toContain('\n');
    expect(line).toMatch(/cannot start the Electron app .* running "exobar serve" instead/);
  });

  it("turns electron's failed download into a short reason", () => {
    const stderr =
      'Downloading Electron binary...\nRequestError: getaddrinfo ENOTFOUND github.com\n    at ...\nError: Electron failed to install correctly. Please delete `node_modules/electron` and run "npx install-electron --no" manually.\n';
    expect(probeFailureReason(stderr, 1, false)).toBe('the Electron binary is not installed and could not be downloaded');
    expect(probeFailureReason('', null, true)).toBe('downloading the Electron binary timed out');
    expect(probeFailureReason('TypeError: boom\n  at x', 1, false)).toBe('the Electron binary is not available: TypeError: boom');
  });
});

describe('npm start: asking electron for its binary', () => {
  it('reports the path require("electron") returns', async () => {
    const dir = fakeElectronProject('ok', "console.log('Downloading Electron binary...'); module.exports = '/opt/electron/Electron';");
    expect(await probeElectron({ cwd: dir })).toEqual({ ok: true, path: '/opt/electron/Electron' });
  });

  it('reports a require("electron") that throws, without its stack trace', async () => {
    const dir = fakeElectronProject(
      'throws',
      'throw new Error(\'Electron failed to install correctly. Please delete `node_modules/electron` and run "npx install-electron --no" manually.\');',
    );
    expect(await probeElectron({ cwd: dir })).toEqual({ ok: false, reason: 'the Electron binary is not installed and could not be downloaded' });
  });
});

describe('npm start on this machine', () => {
  it('prints one line about the missing binary, then runs exobar serve, which prints its URL', async () => {
    // Point electron at a directory with no binary, as electron's own index.js allows, so
    // the test takes the fallback even on a machine that could download Electron.
    const missing = join(scratch, 'no-electron');
    const child = spawn(process.execPath, ['scripts/start.js', '--port', '0', '--data-dir', join(scratch, 'data'), '--sim-time-scale', '0.1'], {
      cwd: root,
      env: { ...process.env, ELECTRON_OVERRIDE_DIST_PATH: missing, EXOBAR_START_SKIP_BUILD: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const lines: string[] = [];
      const url = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).on('line', (line) => {
          // A loaded machine makes the probe slow enough to say it may be downloading: not the fallback's line.
          if (line === SLOW_PROBE_LINE) return;
          lines.push(line);
          const match = /^exobar listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(line);
          if (match) resolve(match[1]!);
        });
        void exited.then((code) => reject(new Error(`start.js exited (${code}) before serving:\n${lines.join('\n')}\n${stderr}`)));
      });
      expect(lines[0]).toBe(fallbackLine(`the Electron binary is missing at ${join(missing, 'electron')}`));
      expect(lines.filter((l) => l.includes('Electron'))).toHaveLength(1);
      expect(lines[1]).toBe(`exobar listening on ${url}`);
      // It really serves: the OpenAI-compatible model list answers.
      const models = await fetch(`${url}/v1/models`);
      expect(models.status).toBe(200);
    } finally {
      child.kill('SIGTERM');
    }
    // SIGTERM reaches serve through start.js: a clean stop, exit code 0.
    expect(await exited).toBe(0);
    expect(stderr).toContain('exobar serve: stopped');
  });
});
