import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EXO_LAST_LINES_MAX } from '../../../shared/exo-process';
import { Redactor } from '../diagnostics/redaction';
import { ExoLogs, exoLogDir } from './exo-logs';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'exo-logs-'));
  dirs.push(dir);
  return dir;
}

describe('ExoLogs', () => {
  it('writes each stream to its capped file, rotated once, and keeps the last lines bounded', async () => {
    const data = dataDir();
    const logs = new ExoLogs(data, { fileCapBytes: 1000 });
    const seen: string[] = [];
    logs.onLine((line, stream) => seen.push(`${stream}:${line}`));
    for (let i = 0; i < 100; i += 1) logs.append('stderr', `[ INFO ] line ${String(i).padStart(3, '0')} ${'x'.repeat(20)}\n`);
    logs.append('stdout', 'half a ');
    logs.append('stdout', 'line\n');
    await logs.close();

    const file = join(exoLogDir(data), 'exo-stderr.log');
    expect(statSync(file).size).toBeLessThanOrEqual(1000);
    expect(statSync(`${file}.1`).size).toBeLessThanOrEqual(1000);
    expect(readFileSync(file, 'utf8')).toContain('line 099');
    expect(readFileSync(join(exoLogDir(data), 'exo-stdout.log'), 'utf8')).toBe('half a line\n');
    expect(existsSync(join(exoLogDir(data), 'exo-stdout.log.1'))).toBe(false);

    const last = logs.lastLines();
    expect(last).toHaveLength(EXO_LAST_LINES_MAX);
    expect(last.at(-1)).toBe('half a line');
    expect(last.at(-2)).toContain('line 099');
    expect(seen).toContain('stdout:half a line');
  });

  it('gives the diagnostic bundle redacted tails, cut at a line start with a marker', async () => {
    const data = dataDir();
    const logs = new ExoLogs(data);
    logs.append('stderr', `${'filler line\n'.repeat(50)}Failed to acquire EXO pidfile at /home/alice/.exo/exo.pid: held\n`);
    logs.append('stdout', 'HF_TOKEN=hf_abcdefghijklmnop owner ops@example.com\n');
    const redactor = new Redactor({ identity: { homeDir: '/home/alice', userName: 'alice', hostName: null } });
    const [stdout, stderr] = logs.diagnosticTails(redactor, 200);
    await logs.close();

    expect(stdout).toMatchObject({ name: 'exo/exo-stdout.log', omittedBytes: 0 });
    expect(stdout!.text).not.toContain('ops@example.com');
    expect(stdout!.text).toContain('[redacted:email]');
    expect(stderr!.name).toBe('exo/exo-stderr.log');
    expect(stderr!.omittedBytes).toBeGreaterThan(0);
    expect(stderr!.text).toMatch(/^\[exobar diagnostics: the first \d+ bytes of this log are not in the bundle\]\nfiller line\n/);
    expect(stderr!.text).toContain('Failed to acquire EXO pidfile at ~/.exo/exo.pid');
    expect(stderr!.text).not.toContain('alice');
  });
});
