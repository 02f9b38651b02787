/**
 * `exobar status` against a running built `exobar serve` (bin/exobar.js, out/node): the
 * text glance and `--json` of a serving model, `--watch` redrawing every second, a wrong
 * EXOBAR_TOKEN named as the environment's, and exit 3 whenever exobar does not answer
 * (server gone, no data directory yet, no token, nothing listening, token refused).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { freePort } from '../../test/support/free-port';
import { listenOnLoopback } from '../../test/support/loopback-server';
import { main, type CliIo } from './cli';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'exobar.js');
const dataDir = mkdtempSync(join(tmpdir(), 'exobar-status-'));
let serve: ChildProcess;
let url = '';
let token = '';

/** Runs `exobar status ARGS` to its end (or until its output satisfies `stopWhen`, then SIGINT). */
function status(args: string[], stopWhen?: (stdout: string) => boolean, env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, 'status', '--data-dir', dataDir, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, EXOBAR_TOKEN: '', ...env },
  });
  let stdout = '';
  let stderr = '';
  let stopped = false;
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
    if (stopWhen && !stopped && stopWhen(stdout)) {
      stopped = true;
      child.kill('SIGINT');
    }
  });
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

beforeAll(async () => {
  serve = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data-dir', dataDir, '--sim-time-scale', '0.1'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    env: { ...process.env, EXOBAR_TOKEN: '' },
  });
  const lines: string[] = [];
  await new Promise<void>((resolve) =>
    createInterface({ input: serve.stdout! }).on('line', (line) => {
      lines.push(line);
      if (lines.length === 2) resolve();
    }),
  );
  url = /^exobar listening on (\S+)$/.exec(lines[0]!)![1]!;
  token = /#token=(\S+)$/.exec(lines[1]!)![1]!;
  const created = await fetch(`${url}/api/instances?wait=ready`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ model: 'sim/llama-3.2-1b' }),
  });
  expect(created.status).toBe(201);
  const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 });
  await client.chat.completions.create({ model: 'sim/llama-3.2-1b', messages: [{ role: 'user', content: 'hello' }], max_tokens: 3 });
});

afterAll(() => {
  if (serve.exitCode === null) process.kill(-serve.pid!, 'SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

describe('exobar status', () => {
  it('shows each model in plain words, with its queue, TTFT p50 and fast synch; exit 0', async () => {
    const { code, stdout } = await status([]);
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^exobar \\S+ at ${url.replace(/[.]/g, '\\.')} \\(pid ${serve.pid}\\)$`));
    expect(lines[1]).toMatch(/^MODEL\s+STATE\s+QUEUE\s+IN FLIGHT\s+TTFT P50\s+TOK\/S\s+FAST SYNCH$/);
    expect(lines[2]).toMatch(/^Llama 3\.2 1B \(simulated\)\s+serving\s+0\s+0\s+\d+\.\d\ds\s+\S+\s+off \(ring instance\)$/);
    expect(lines.slice(3)).toEqual(['warnings: none', 'exo: not attached']);
  });

  it('--json gives the same as JSON', async () => {
    const { code, stdout } = await status(['--json']);
    expect(code).toBe(0);
    const report = JSON.parse(stdout);
    expect(report).toMatchObject({ url, pid: serve.pid, warnings: [], exo: null });
    expect(report.models).toHaveLength(1);
    expect(report.models[0]).toMatchObject({
      model: 'sim/llama-3.2-1b',
      source: 'local',
      lifecycle: 'serving',
      status: 'Ready',
      queued: 0,
      inFlight: 0,
      fastSynch: { enabled: false, reason: 'ring instance' },
    });
    expect(report.models[0].ttftP50Ms).toBeGreaterThan(0);
  });

  it('--watch redraws every second until Ctrl-C', async () => {
    const framesOf = (out: string) => out.split('\x1b[2J\x1b[H').filter((f) => f.includes('warnings:'));
    // Stopped once the second whole frame is drawn: a redraw happened, whatever the load.
    const { code, stdout } = await status(['--watch'], (out) => framesOf(out).length >= 2 && out.trimEnd().endsWith('exo: not attached'));
    expect(code).toBe(0);
    const frames = framesOf(stdout);
    expect(frames.length).toBeGreaterThanOrEqual(2);
    for (const frame of frames) expect(frame).toContain('Llama 3.2 1B (simulated)');
  });

  it('says a refused EXOBAR_TOKEN came from the environment, not the token file; exit 3', async () => {
    const { code, stdout, stderr } = await status([], undefined, { EXOBAR_TOKEN: 'wrong' });
    expect(code).toBe(3);
    expect(stdout).toBe('');
    expect(stderr.trim()).toBe(`exobar status: exobar at ${url} refused the token from EXOBAR_TOKEN (the environment)`);
  });

  it('exits 3 when exobar does not answer (the server stopped)', async () => {
    const exited = new Promise((r) => serve.once('exit', r));
    serve.kill('SIGTERM');
    await exited;
    // No record now (a clean stop removes it): nothing runs for this data directory, and no port is guessed.
    const { code, stderr } = await status([]);
    expect(code).toBe(3);
    expect(stderr).toContain(`exobar status: no exobar is running for ${dataDir}: no server has recorded itself in ${join(dataDir, 'server.json')}`);
    const json = await status(['--json']);
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout).error).toMatch(/no exobar is running/);
  });
});

describe('exobar status exits 3 whenever exobar does not answer, whatever the reason', () => {
  function captureIo(env: NodeJS.ProcessEnv = {}): CliIo & { errors: string[] } {
    const errors: string[] = [];
    return { errors, out: () => undefined, err: (l) => errors.push(l), env };
  }
  /** A data directory whose record names a live process (this one) at `url`. */
  function recordedAt(url: string, token: string | null): string {
    const dir = mkdtempSync(join(tmpdir(), 'exobar-status-recorded-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'server.json'), JSON.stringify({ url, pid: process.pid, tokenPath: join(dir, 'token'), startedAt: 1 }));
    if (token !== null) writeFileSync(join(dir, 'token'), `${token}\n`);
    return dir;
  }
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('no data directory yet', async () => {
    const io = captureIo();
    expect(await main(['status', '--data-dir', join(tmpdir(), 'exobar-status-never-created-', String(process.pid))], io)).toBe(3);
    expect(io.errors.join('\n')).toMatch(/no exobar is running for .*: no server has recorded itself/);
  });

  it('no control token', async () => {
    const io = captureIo();
    const dir = recordedAt(`http://127.0.0.1:${await freePort()}`, null);
    expect(await main(['status', '--data-dir', dir], io)).toBe(3);
    expect(io.errors.join('\n')).toContain(`no control token for exobar at http://127.0.0.1:`);
  });

  it('nothing listening', async () => {
    const port = await freePort();
    const io = captureIo();
    expect(await main(['status', '--data-dir', recordedAt(`http://127.0.0.1:${port}`, 'a-token-0123456789abcdef')], io)).toBe(3);
    expect(io.errors.join('\n')).toContain(`exobar is not answering at http://127.0.0.1:${port} (the server recorded in`);
  });

  it('the token refused: the token file named', async () => {
    const listener = await listenOnLoopback(createServer((_request, response) => response.writeHead(401).end()));
    try {
      const dir = recordedAt(listener.url, 'a-token-0123456789abcdef');
      const io = captureIo();
      expect(await main(['status', '--data-dir', dir], io)).toBe(3);
      expect(io.errors).toEqual([`exobar status: exobar at ${listener.url} refused the token from ${join(dir, 'token')}`]);
    } finally {
      await listener.close();
    }
  });
});
