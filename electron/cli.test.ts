/**
 * `exobar serve` as a real process: bin/exobar.js running the built out/node/exobar.mjs
 * (the test setup builds it), port 0, the built sim runners.
 * It prints its address once it accepts connections, serves a request, and on
 * SIGTERM stops every runner and exits, leaving no process behind.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it, vi } from 'vitest';
import OpenAI from 'openai';
import { FAKE_EXO_COMMAND, freePort, killAll, makeFakeExoDirs, processesWithHome } from '../test/support/fake-exo-exe/harness';
import { processAlive } from '../test/support/process-alive';
import { main, type CliIo } from './cli';

const BIN = join(import.meta.dirname, '..', 'bin', 'exobar.js');
const children: ChildProcess[] = [];
const dirs: string[] = [];

afterEach(() => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null && child.pid) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * Live processes in these process groups (the CLI's own, and each runner's: runners get
 * their own group). Zombies are left out: they have exited already, and reaping them is
 * up to whichever init adopted them (in a container that may never happen).
 */
function processesInGroups(groups: number[]): string[] {
  const out = execFileSync('ps', ['-eo', 'pid=,pgid=,stat=,args='], { encoding: 'utf8' });
  return out
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && groups.includes(Number(line.split(/\s+/)[1])) && !line.split(/\s+/)[2]!.startsWith('Z'));
}

function captureIo(): CliIo & { lines: string[]; errors: string[] } {
  const lines: string[] = [];
  const errors: string[] = [];
  return { lines, errors, out: (l) => lines.push(l), err: (l) => errors.push(l), env: {} };
}

describe('exobar serve', () => {
  it('prints its address, serves, and on SIGTERM stops every runner and exits 0', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'exobar-cli-'));
    dirs.push(dataDir);
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data-dir', dataDir, '--sim-time-scale', '0.1'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
      env: { ...process.env, EXOBAR_TOKEN: '' },
    });
    children.push(child);
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
    const lines: string[] = [];
    const reader = createInterface({ input: child.stdout! });
    await new Promise<void>((resolve, reject) => {
      reader.on('line', (line) => {
        lines.push(line);
        if (lines.length === 2) resolve();
      });
      void exited.then(() => reject(new Error(`exobar serve exited early: ${stderr}`)));
    });
    const listening = /^exobar listening on (http:\/\/127\.0\.0\.1:(\d+))$/.exec(lines[0]!);
    expect(listening, lines[0]).not.toBeNull();
    const url = listening![1]!;
    const open = new RegExp(`^open ${url.replace(/[.]/g, '\\.')}/#token=([A-Za-z0-9_-]+)$`).exec(lines[1]!);
    expect(open, lines[1]).not.toBeNull();
    const token = open![1]!;

    const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
    const created = await fetch(`${url}/api/instances?wait=ready`, { method: 'POST', headers, body: JSON.stringify({ model: 'sim/llama-3.2-1b' }) });
    expect(created.status).toBe(201);
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: 'sim/llama-3.2-1b', messages: [{ role: 'user', content: 'hello' }], max_tokens: 3 });
    expect(completion.usage?.completion_tokens).toBe(3);
    const state = (await (await fetch(`${url}/api/state`, { headers })).json()) as { instances: { runner: { pid: number } }[] };
    const runnerPid = state.instances[0]!.runner.pid;
    expect(runnerPid).toBeGreaterThan(0);
    const groups = [child.pid!, runnerPid];
    expect(processesInGroups([runnerPid]).length).toBeGreaterThanOrEqual(1);
    // The runner is the bundle the app ships, run as plain Node: no tsx, no TypeScript.
    const runnerArgs = execFileSync('ps', ['-o', 'args=', '-p', String(runnerPid)], { encoding: 'utf8' }).trim();
    expect(runnerArgs).toMatch(/^\S*node\S* \S*\/out\/main\/sim-runner\.cjs --model sim\/llama-3\.2-1b /);

    // A stream in flight when the signal comes must end, not hang.
    const stream = await client.chat.completions.create({ model: 'sim/llama-3.2-1b', messages: [{ role: 'user', content: 'long' }], max_tokens: 100_000, stream: true });
    const streamEnded = (async () => {
      try {
        for await (const _chunk of stream) {
          // drain
        }
        return 'ended';
      } catch (error) {
        return (error as Error).message;
      }
    })();

    child.kill('SIGTERM');
    expect(await exited).toEqual({ code: 0, signal: null });
    // The node ends it with its shutdown error, in OpenAI's error shape, before the server closes.
    expect(await streamEnded).toMatch(/shutting down/);
    expect(stderr).toMatch(/stopped/);
    expect(stderr).not.toContain(token);
    expect(() => process.kill(runnerPid, 0)).toThrow();
    expect(processesInGroups(groups)).toEqual([]);
  });

  it('--exo-start starts this Mac\'s exo (--exo-command), says its progress, and on SIGTERM stops it and its runners', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'exobar-cli-'));
    const exoDirs = makeFakeExoDirs();
    dirs.push(dataDir);
    try {
      // exo's port and HOME from settings: the fake exo must not meet a real one (or another test's) on 52415.
      writeFileSync(join(dataDir, 'settings.json'), JSON.stringify({ exo: { apiPort: await freePort(), env: { HOME: exoDirs.home, FAKE_EXO_RUNNERS: '1' } } }));
      const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data-dir', dataDir, '--exo-start', '--exo-command', FAKE_EXO_COMMAND], {
        stdio: ['ignore', 'ignore', 'pipe'],
        detached: true,
        env: { ...process.env, EXOBAR_TOKEN: '' },
      });
      children.push(child);
      const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
      const errors: string[] = [];
      const running = new Promise<number>((resolve, reject) => {
        createInterface({ input: child.stderr! }).on('line', (line) => {
          errors.push(line);
          const pid = /^exo: running \(pid (\d+)\)$/.exec(line);
          if (pid) resolve(Number(pid[1]));
        });
        void exited.then(() => reject(new Error(`exobar serve exited early: ${errors.join('\n')}`)));
      });
      const exoPid = await running;
      expect(errors[0]).toMatch(/^exo: starting: checking that port \d+ is free$/);
      await vi.waitFor(() => expect(errors.some((l) => l.startsWith('exo: fast synch off ('))).toBe(true), { timeout: 10_000 });
      // exo and its runner (the fake's tree, found by the HOME it was given: Linux only).
      const linux = process.platform === 'linux';
      if (linux) await vi.waitFor(() => expect(processesWithHome(exoDirs.home).length).toBeGreaterThanOrEqual(2), { timeout: 10_000 });

      child.kill('SIGTERM');
      expect(await exited).toEqual({ code: 0, signal: null });
      expect(errors).toContain('exo: stopped: stopped by exobar (SIGINT, graceful)');
      expect(processAlive(exoPid)).toBe(false);
      if (linux) expect(processesWithHome(exoDirs.home)).toEqual([]);
    } finally {
      if (process.platform === 'linux') killAll(processesWithHome(exoDirs.home));
      exoDirs.remove();
    }
  });

  it('answers bad flags with its usage and exit code 2', async () => {
    for (const argv of [['serve', '--exo-command', 'exo'], ['serve', '--exo-start', '--exo-command', ''], ['serve', '--port', 'abc'], ['serve', '--port', '70000'], ['serve', '--sim-time-scale', '-1'], ['serve', '--nope'], ['serve', 'extra'], ['frobnicate'], []]) {
      const io = captureIo();
      expect(await main(argv, io)).toBe(2);
      expect(io.errors.join('\n')).toMatch(/usage: exobar/);
    }
  });

  it('refuses an --exo that is not an exo address, saying why', async () => {
    for (const [url, why] of [
      ['ftp://host:1', "exo's API is http or https"],
      ['not a url', 'is not a URL'],
      ['http://me:pw@host:52415', 'exo has no login'],
    ]) {
      const io = captureIo();
      expect(await main(['serve', '--exo', url!], io)).toBe(2);
      expect(io.errors.join('\n')).toContain(`--exo: `);
      expect(io.errors.join('\n')).toContain(why);
    }
  });

  it('prints help with exit code 0', async () => {
    const io = captureIo();
    expect(await main(['--help'], io)).toBe(0);
    expect(io.lines.join('\n')).toMatch(/serve +run the node/);
    const serveHelp = captureIo();
    expect(await main(['serve', '--help'], serveHelp)).toBe(0);
    expect(serveHelp.lines.join('\n')).toMatch(/--sim-time-scale X/);
    expect(serveHelp.lines.join('\n')).toMatch(/--exo URL +attach to the exo node at URL/);
    expect(serveHelp.lines.join('\n')).toMatch(/--exo-start .*\n.*\n +--exo-command CMD/);
  });

  it('says so and exits 1 when the port is taken', async () => {
    const { createServer } = await import('node:net');
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    const dataDir = mkdtempSync(join(tmpdir(), 'exobar-cli-'));
    dirs.push(dataDir);
    const io = captureIo();
    try {
      expect(await main(['serve', '--port', String(port), '--data-dir', dataDir], io)).toBe(1);
      expect(io.errors.join('\n')).toMatch(new RegExp(`port ${port} .*already in use.*--port`));
    } finally {
      blocker.close();
    }
  });
});
