import { mkdtempSync, rmSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadOrCreateToken, tokensEqual } from './auth-token';
import { resolveDataDir } from './data-dir';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'exobar-token-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('the API token', () => {
  it('is generated once into <dataDir>/token with mode 0600 and reused afterwards', async () => {
    const dir = tempDir();
    const first = await loadOrCreateToken(dir, {});
    expect(first.source).toBe('generated');
    expect(first.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(statSync(join(dir, 'token')).mode & 0o777).toBe(0o600);
    const second = await loadOrCreateToken(dir, {});
    expect(second).toMatchObject({ source: 'file', token: first.token });
  });

  it('tightens a token file that others can read', async () => {
    const dir = tempDir();
    const { token } = await loadOrCreateToken(dir, {});
    chmodSync(join(dir, 'token'), 0o644);
    expect((await loadOrCreateToken(dir, {})).token).toBe(token);
    expect(statSync(join(dir, 'token')).mode & 0o777).toBe(0o600);
  });

  it('takes EXOBAR_TOKEN over the file, and refuses a weak one', async () => {
    const dir = tempDir();
    expect(await loadOrCreateToken(dir, { EXOBAR_TOKEN: 'from-the-environment-123' })).toMatchObject({ source: 'env', token: 'from-the-environment-123' });
    await expect(loadOrCreateToken(dir, { EXOBAR_TOKEN: 'short' })).rejects.toThrow(/EXOBAR_TOKEN.*at least 16/);
  });

  it('refuses a broken token file instead of silently replacing it', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'token'), 'bad token with spaces', { mode: 0o600 });
    await expect(loadOrCreateToken(dir, {})).rejects.toThrow(/delete it to get a new one/);
  });

  it('compares tokens of any length', () => {
    expect(tokensEqual('abc', 'abc')).toBe(true);
    expect(tokensEqual('abc', 'abcd')).toBe(false);
    expect(tokensEqual('', 'abc')).toBe(false);
  });
});

describe('the data directory', () => {
  it('is the flag, else $EXOBAR_DATA_DIR, else ~/.exobar', () => {
    expect(resolveDataDir('/x/y', { EXOBAR_DATA_DIR: '/env' })).toBe('/x/y');
    expect(resolveDataDir(null, { EXOBAR_DATA_DIR: '/env' })).toBe('/env');
    expect(resolveDataDir(null, {})).toMatch(/\.exobar$/);
    expect(resolveDataDir('~/d', {})).not.toContain('~');
  });
});
