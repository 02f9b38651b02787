/**
 * `exobar diagnostics --data-dir D` finds D's server through D's own record only: for a
 * D whose server has stopped (no record, or a record naming a process that is gone) it
 * writes the offline bundle and exits 0, even while another exobar, or any HTTP server,
 * listens at the address the record or D's settings name; that one is never asked. And
 * an --out it cannot write is said in words, before anything is collected.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { main, type CliIo } from './cli';
import { parseBundle, readZip } from '../../test/support/diagnostics/read-zip';
import { listenOnLoopback } from '../../test/support/loopback-server';
import { startServe, type ServeProcess } from '../../test/support/e2e/serve-process';

const dirs: string[] = [];
const serves: ServeProcess[] = [];
afterEach(async () => {
  for (const serve of serves.splice(0)) await serve.stop();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

function captureIo(env: NodeJS.ProcessEnv = {}): CliIo & { lines: string[]; errors: string[] } {
  const lines: string[] = [];
  const errors: string[] = [];
  return { lines, errors, out: (l) => lines.push(l), err: (l) => errors.push(l), env };
}

/** A pid no process has any more: a finished child's. */
async function deadPid(): Promise<number> {
  const gone = spawn(process.execPath, ['-e', '0']);
  await new Promise((resolve) => gone.on('exit', resolve));
  return gone.pid!;
}

async function expectOfflineBundle(out: string): Promise<void> {
  const manifest = parseBundle(await readZip(out)).json.get('manifest.json') as { source: string };
  expect(manifest.source).toBe('data directory');
}

describe('exobar diagnostics for a data directory whose server has stopped', () => {
  it('writes the offline bundle (exit 0) while another exobar serve listens where its stale record and its settings point', async () => {
    const other = await startServe({ simTimeScale: 0.1 });
    serves.push(other);
    const dataDir = tempDir('exobar-diag-stopped-');
    const port = Number(new URL(other.url).port);
    writeFileSync(join(dataDir, 'settings.json'), JSON.stringify({ apiPort: port }));
    writeFileSync(join(dataDir, 'token'), 'the-stopped-servers-token-0123456789\n');
    const pid = await deadPid();
    writeFileSync(join(dataDir, 'server.json'), JSON.stringify({ url: other.url, pid, tokenPath: join(dataDir, 'token'), startedAt: 1 }));

    const out = join(dataDir, 'bundle.zip');
    const io = captureIo();
    expect(await main(['diagnostics', '--out', out, '--data-dir', dataDir], io), io.errors.join('\n')).toBe(0);
    expect(io.errors.join('\n')).toMatch(
      new RegExp(`writing the offline bundle \\(no live state, no diagnosis\\): no exobar is running for ${dataDir}: .*names pid ${pid}, which is no longer running`),
    );
    await expectOfflineBundle(out);
  });

  it('writes the offline bundle (exit 0) with no record, never asking the HTTP server at its settings\' port', async () => {
    const asked: string[] = [];
    const listener = await listenOnLoopback(
      createServer((request, response) => {
        asked.push(`${request.method} ${request.url}`);
        response.writeHead(401, { 'Content-Type': 'application/json' }).end('{"error":{"message":"wrong token"}}');
      }),
    );
    try {
      const dataDir = tempDir('exobar-diag-norecord-');
      writeFileSync(join(dataDir, 'settings.json'), JSON.stringify({ apiPort: Number(new URL(listener.url).port) }));
      writeFileSync(join(dataDir, 'token'), 'a-token-0123456789abcdef\n');
      const out = join(dataDir, 'bundle.zip');
      const io = captureIo();
      expect(await main(['diagnostics', '--out', out, '--data-dir', dataDir], io), io.errors.join('\n')).toBe(0);
      expect(io.errors.join('\n')).toMatch(/no exobar is running for .*: no server has recorded itself in .*server\.json/);
      await expectOfflineBundle(out);
      expect(asked).toEqual([]);
    } finally {
      await listener.close();
    }
  });
});

describe('exobar diagnostics --out', () => {
  it('says in words that the folder does not exist (exit 1): no errno, no temporary file name, nothing written', async () => {
    const dataDir = tempDir('exobar-diag-out-');
    const missing = join(dataDir, 'no-such-folder');
    const out = join(missing, 'x.zip');
    for (const argv of [
      ['diagnostics', '--out', out, '--data-dir', dataDir],
      ['diagnostics', '--offline', '--out', out, '--data-dir', dataDir],
    ]) {
      const io = captureIo();
      expect(await main(argv, io)).toBe(1);
      expect(io.errors).toEqual([`exobar diagnostics: cannot write ${out}: the folder ${missing} does not exist`]);
      expect(io.lines).toEqual([]);
    }
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it('says so when --out is a folder', async () => {
    const dataDir = tempDir('exobar-diag-out-');
    const io = captureIo();
    expect(await main(['diagnostics', '--offline', '--out', dataDir, '--data-dir', dataDir], io)).toBe(1);
    expect(io.errors.join('\n')).toBe(`exobar diagnostics: cannot write ${dataDir}: it is a folder; give a file name such as ${dataDir}/exobar-diagnostics.zip`);
  });
});
