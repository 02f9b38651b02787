/**
 * `exobar status` against a running built `exobar serve` (bin/exobar.js, out/node): the
 * text glance and `--json` of a serving model, `--watch` redrawing every second, and
 * exit 3 once the server is gone.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { freePort } from '../test/support/free-port';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';

const BIN = join(import.meta.dirname, '..', 'bin', 'exobar.js');
const dataDir = mkdtempSync(join(tmpdir(), 'exobar-status-'));
let serve: ChildProcess;
let url = '';
let token = '';

/** Runs `exobar status ARGS` to its end (or until `stopAfterMs`, then SIGINT). */
/** Runs `exobar status`; `stopWhen`, when given, sends Ctrl-C (SIGINT) once its stdout so far satisfies it. */
function status(args: string[], stopWhen?: (stdout: string) => boolean): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, 'status', '--data-dir', dataDir, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, EXOBAR_TOKEN: '' },
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

  it('--watch redraws until Ctrl-C', async () => {
    const CLEAR = '\x1b[2J\x1b[H';
    // Ctrl-C once the third frame has begun: two whole frames drawn, then a clean exit
    // (the once-a-second cadence is a timer's, not something a loaded machine can keep).
    const { code, stdout } = await status(['--watch'], (out) => out.split(CLEAR).length > 3);
    expect(code).toBe(0);
    // Each frame the next one's clear followed, so it was drawn whole.
    const frames = stdout.split(CLEAR).slice(1, -1);
    expect(frames.length).toBeGreaterThanOrEqual(2);
    for (const frame of frames) expect(frame).toContain('Llama 3.2 1B (simulated)');
  });

  it('exits 3 when exobar does not answer (the server stopped)', async () => {
    const exited = new Promise((r) => serve.once('exit', r));
    serve.kill('SIGTERM');
    await exited;
    // No record now (a clean stop removes it): status tries the settings' port, here one nothing listens on.
    const port = await freePort();
    writeFileSync(join(dataDir, 'settings.json'), JSON.stringify({ apiPort: port }));
    const { code, stderr } = await status([]);
    expect(code).toBe(3);
    expect(stderr).toContain(`exobar status: exobar is not answering at http://127.0.0.1:${port} (no server has recorded itself in`);
    const json = await status(['--json']);
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout).error).toMatch(/not answering/);
  });
});
