/**
 * The bundle's endpoints on the real API server and node (one sim runner), and
 * `exobar diagnostics` against that server, against no server, and offline.
 */
import { createServer } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePrompt } from '../../../shared/token-count';
import { main, type CliIo } from '../../cli/cli';
import { startCore, type RunningCore } from '../start-core';
import { diagnosticsRoutes } from './diagnostics-routes';
import { parseBundle, readZip } from '../../../test/support/diagnostics/read-zip';

let core: RunningCore;
let dataDir: string;
let instanceId: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'exobar-diag-routes-'));
  core = await startCore({
    dataDir,
    port: 0,
    simTimeScale: 0.1,
    rendererDir: null,
    logger: pino({ level: 'silent' }),
    extraRoutes: (running) => diagnosticsRoutes({ dataDir: running.dataDir, getSettings: () => running.settings }),
  });
  const instance = await core.node.createInstance({ model: 'sim/llama-3.2-1b', instanceType: 'ring', fastSynch: 'auto', acknowledgeRisk: false });
  instanceId = instance.id;
  await core.node.waitForReady(instanceId, 60_000);
  await core.node.submit({ model: 'sim/llama-3.2-1b', messages: makePrompt(30, 'routes'), maxTokens: 4 }, () => undefined).done;
});

afterAll(async () => {
  await core?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

const auth = () => ({ Authorization: `Bearer ${core.token}` });

function captureIo(env: NodeJS.ProcessEnv = {}): CliIo & { lines: string[]; errors: string[] } {
  const lines: string[] = [];
  const errors: string[] = [];
  return { lines, errors, out: (l) => lines.push(l), err: (l) => errors.push(l), env };
}

describe('GET /api/diagnostics/preview', () => {
  it('lists the files, their sizes and the redaction counts', async () => {
    const response = await fetch(`${core.url}/api/diagnostics/preview`, { headers: auth() });
    expect(response.status).toBe(200);
    const preview = (await response.json()) as { files: Array<{ name: string; bytes: number }>; redactions: Record<string, number>; totalBytes: number };
    expect(preview.files.map((f) => f.name)).toEqual(
      expect.arrayContaining(['README.txt', 'manifest.json', 'timeline.csv', `runners/${instanceId}/stderr.log`]),
    );
    expect(preview.totalBytes).toBe(preview.files.reduce((s, f) => s + f.bytes, 0));
    expect(Object.keys(preview.redactions)).toEqual(expect.arrayContaining(['prompt_text', 'home_dir', 'user_name']));
  });

  it('needs the token, and refuses a bad threshold', async () => {
    expect((await fetch(`${core.url}/api/diagnostics/preview`)).status).toBe(401);
    const bad = await fetch(`${core.url}/api/diagnostics/preview?threshold_ms=soon`, { headers: auth() });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(/threshold_ms/);
  });
});

describe('POST /api/diagnostics', () => {
  it('answers the zip as an attachment', async () => {
    const response = await fetch(`${core.url}/api/diagnostics?threshold_ms=0`, { method: 'POST', headers: auth() });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/zip');
    expect(response.headers.get('content-disposition')).toMatch(/^attachment; filename="exobar-diagnostics-\d{8}-\d{6}\.zip"$/);
    const path = join(dataDir, 'via-http.zip');
    await writeFile(path, Buffer.from(await response.arrayBuffer()));
    const parsed = parseBundle(await readZip(path));
    // threshold 0: the one request is diagnosed.
    expect((parsed.json.get('manifest.json') as { diagnosis: { findings: unknown[] } }).diagnosis.findings).toHaveLength(1);
    expect(parsed.csv.get('timeline.csv')).toHaveLength(1);
  });

  it('needs the token', async () => {
    expect((await fetch(`${core.url}/api/diagnostics`, { method: 'POST' })).status).toBe(401);
  });
});

describe('exobar diagnostics', () => {
  it('fetches the bundle from the running server', async () => {
    const out = join(dataDir, 'cli.zip');
    const io = captureIo();
    expect(await main(['diagnostics', '--out', out, '--data-dir', dataDir, '--url', core.url], io)).toBe(0);
    expect(io.lines.join('\n')).toMatch(/from the server at/);
    const parsed = parseBundle(await readZip(out));
    expect((parsed.json.get('manifest.json') as { source: string }).source).toBe('running node');
  });

  it('exports the data directory when no server runs for it (no port guessed from the settings)', async () => {
    // A port nothing listens on, as the settings' apiPort: not asked, the record alone says where a server is.
    const free = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const port = (probe.address() as { port: number }).port;
        probe.close(() => resolve(port));
      });
    });
    const dir = await mkdtemp(join(tmpdir(), 'exobar-diag-cli-'));
    try {
      await writeFile(join(dir, 'settings.json'), JSON.stringify({ apiPort: free }));
      await writeFile(join(dir, 'token'), 'a-token-nobody-listens-for-123\n');
      const out = join(dir, 'offline.zip');
      const io = captureIo();
      expect(await main(['diagnostics', '--out', out, '--data-dir', dir], io)).toBe(0);
      expect(io.errors.join('\n')).toMatch(/writing the offline bundle \(no live state, no diagnosis\): no exobar is running for .*: no server has recorded itself in/);
      const parsed = parseBundle(await readZip(out));
      expect((parsed.json.get('manifest.json') as { source: string }).source).toBe('data directory');
      expect(parsed.json.get('settings.json')).toMatchObject({ settings: { apiPort: free } });
      for (const [name, data] of await readZip(out)) expect(data.toString().includes('a-token-nobody-listens-for-123'), name).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reports a server that refuses (wrong token) instead of exporting less', async () => {
    const io = captureIo({ EXOBAR_TOKEN: 'not-the-right-token-0000' });
    expect(await main(['diagnostics', '--out', join(dataDir, 'refused.zip'), '--data-dir', dataDir, '--url', core.url], io)).toBe(1);
    expect(io.errors.join('\n')).toContain(`exobar at ${core.url} refused the token from EXOBAR_TOKEN (the environment)`);
  });

  it('explains bad flags with its usage', async () => {
    const io = captureIo();
    expect(await main(['diagnostics', '--threshold-ms', 'soon'], io)).toBe(2);
    expect(io.errors.join('\n')).toMatch(/--threshold-ms: expected whole milliseconds[\s\S]*usage: exobar diagnostics/);
  });
});
