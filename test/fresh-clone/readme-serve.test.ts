/**
 * The README's first commands on a fresh clone: `npm ci`, then `npx exobar serve`
 * serves the built page (not "the page is not built yet"), saying in one line that it
 * builds it. The clone is the working tree's files (tracked and new, what git would
 * commit) copied into a temporary folder, with no out/ and no node_modules.
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const REPO_ROOT = resolve(__dirname, '../..');
const clone = mkdtempSync(join(tmpdir(), 'exobar-fresh-clone-'));

afterAll(() => rmSync(clone, { recursive: true, force: true }));

function copyWorkingTree(): void {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: REPO_ROOT, encoding: 'utf8' })
    .split('\0')
    .filter(Boolean);
  for (const file of files) {
    mkdirSync(dirname(join(clone, file)), { recursive: true });
    try {
      cpSync(join(REPO_ROOT, file), join(clone, file));
    } catch {
      // deleted in the working tree but still in the index: not in a fresh clone either
    }
  }
}

describe('a fresh clone, as the README says', () => {
  it('after npm ci, npx exobar serve builds and serves the page', { timeout: 600_000 }, async () => {
    copyWorkingTree();
    // NODE_ENV as a user's shell has it: the test runner's "test" must not reach npm or the builds.
    const env = { ...process.env, NODE_ENV: undefined };
    execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], { cwd: clone, stdio: 'ignore', timeout: 400_000, env });

    // Its own process group: npx runs exobar as a grandchild, and the stop must reach it.
    const child = spawn('npx', ['exobar', 'serve', '--port', '0', '--data-dir', join(clone, '.data')], {
      cwd: clone,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const exited = new Promise((r) => child.once('exit', r));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      const url = await new Promise<string>((resolveUrl, reject) => {
        const timer = setTimeout(() => reject(new Error(`no "listening" line in 180 s; stderr:\n${stderr}`)), 180_000);
        const look = (): void => {
          const m = /exobar listening on (http:\/\/\S+)/.exec(stdout + stderr);
          if (m) {
            clearTimeout(timer);
            resolveUrl(m[1]!);
          }
        };
        child.stdout.on('data', look);
        child.stderr.on('data', look);
        child.on('exit', (code) => reject(new Error(`exobar serve exited (${code}); stderr:\n${stderr}`)));
      });
      expect(stderr).toContain('exobar: building the page into out/renderer (first run)...');
      const page = await (await fetch(`${url}/`)).text();
      expect(page).not.toContain('the page is not built yet');
      const script = /<script[^>]+src="\.\/(assets\/[^"]+\.js)"/.exec(page);
      expect(script, page).not.toBeNull();
      const asset = await fetch(`${url}/${script![1]}`);
      expect(asset.status).toBe(200);
      expect((await asset.text()).length).toBeGreaterThan(10_000);
    } finally {
      process.kill(-child.pid!, 'SIGINT');
      const killer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 15_000);
      await exited;
      clearTimeout(killer);
    }
  });
});
