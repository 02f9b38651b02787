/**
 * exobar's own log as a source: the core's logger writes `<dataDir>/exobar.log` beside the
 * terminal, `GET /api/logs` lists it as `exobar`, and following it shows a request's line
 * as the API logs it; the file rotates at its cap.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCoreRig, type CoreRig } from '../../../test/support/api-harness';
import { createTerminalLogger } from '../terminal-log';
import { ownLogDestination, ownLogPath } from './own-log';

let rig: CoreRig;
let ownLog = '';
const terminal: string[] = [];

beforeAll(async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'exobar-own-log-'));
  ownLog = ownLogPath(dataDir);
  const logger = createTerminalLogger({ format: 'pretty', level: 'info', out: { write: (t: string) => terminal.push(t) }, ownLog });
  rig = await startCoreRig({ dataDir, logger, ownLog });
});
afterAll(async () => {
  await rig?.close();
});

describe("exobar's own log", () => {
  it('is listed as the source "exobar" and answers its lines: the JSON records, while the terminal gets them pretty', async () => {
    await rig.control('GET', '/api/state');
    const listed = await rig.control('GET', '/api/logs');
    expect(listed.body.sources).toContainEqual(expect.objectContaining({ id: 'exobar', kind: 'exobar', instanceId: null, title: 'exobar: its own log' }));
    // The file is written asynchronously: its line comes a moment after the answer.
    const records = async () =>
      ((await rig.control('GET', '/api/logs/exobar?lines=50')).body.lines as string[]).map((l) => JSON.parse(l) as { msg: string; path?: string });
    await expect.poll(records, { timeout: 10_000 }).toContainEqual(expect.objectContaining({ msg: 'request', path: '/api/state', component: 'api' }));
    expect(terminal.join('')).toMatch(/INFO {2}GET \/api\/state 200 /);
  });

  it('follows live: a request logged by the API arrives in the stream (the browser test times it)', async () => {
    const abort = new AbortController();
    const response = await fetch(`${rig.url}/api/logs/exobar?follow=1&lines=0`, { headers: { Authorization: `Bearer ${rig.token}` }, signal: abort.signal });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    // A path no route has: its 404 is logged with its path (a query never is).
    expect((await rig.control('GET', '/api/own-log-marker')).status).toBe(404);
    let text = '';
    while (!text.includes('/api/own-log-marker')) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended before the line came:\n${text}`);
      text += decoder.decode(value, { stream: true });
    }
    abort.abort();
  });

  it("lists exo's own log where exo keeps it on this Mac, and reads it", async () => {
    const exoLogDir = mkdtempSync(join(tmpdir(), 'exobar-exo-log-'));
    const withExo = await startCoreRig({ exo: { offerUrl: null, exoLogDir } });
    try {
      expect((await withExo.control('GET', '/api/logs')).body.sources).not.toContainEqual(expect.objectContaining({ id: 'exo:log' }));
      writeFileSync(join(exoLogDir, 'exo.log'), '[ 10:00:00.000 | INFO ] Starting EXO | pid=4242\n[ 10:00:00.010 | INFO ] FAST_SYNCH forced OFF\n');
      expect((await withExo.control('GET', '/api/logs')).body.sources).toContainEqual(
        expect.objectContaining({ id: 'exo:log', kind: 'exo', title: 'exo: its log on this Mac' }),
      );
      expect((await withExo.control('GET', '/api/logs/exo:log?lines=1')).body.lines).toEqual(['[ 10:00:00.010 | INFO ] FAST_SYNCH forced OFF']);
    } finally {
      await withExo.close();
      rmSync(exoLogDir, { recursive: true, force: true });
    }
  });

  it('rotates at its cap, so it takes at most twice that on disk', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'exobar-own-log-cap-'));
    try {
      const path = join(dir, 'exobar.log');
      const destination = ownLogDestination(path, 1000);
      for (let i = 0; i < 30; i++) destination.write(`${JSON.stringify({ level: 30, msg: `record ${i}`, pad: 'x'.repeat(80) })}\n`);
      await expect.poll(() => readFileSync(path, 'utf8')).toContain('record 29');
      expect(statSync(path).size).toBeLessThanOrEqual(1000);
      expect(statSync(`${path}.1`).size).toBeLessThanOrEqual(1000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
