/**
 * `exobar serve` as a real process: bin/exobar.js running the built out/node/exobar.mjs
 * (the test setup builds it), port 0, the built sim runners.
 * It prints its address once it accepts connections, serves a request, and on
 * SIGTERM stops every runner and exits, leaving no process behind.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it, vi } from 'vitest';
import OpenAI from 'openai';
import { FAKE_EXO_COMMAND, killAll, makeFakeExoDirs, processesWithHome } from '../../test/support/fake-exo-exe/harness';
import { processAlive } from '../../test/support/process-alive';
import { main, type CliIo } from './cli';
import { parseBundle, readZip } from '../../test/support/diagnostics/read-zip';
import { readServerRecord, writeServerRecord } from '../core/server-record';
import { freePort } from '../../test/support/free-port';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'exobar.js');
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

/** `exobar serve --port 0` as a real process, once it has printed its address and token. */
async function startServe() {
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
  return { dataDir, child, exited, url, token: open![1]!, stderr: () => stderr };
}

function captureIo(): CliIo & { lines: string[]; errors: string[] } {
  const lines: string[] = [];
  const errors: string[] = [];
  return { lines, errors, out: (l) => lines.push(l), err: (l) => errors.push(l), env: {} };
}

describe('exobar serve', () => {
  it('prints its address, serves, and on SIGTERM stops every runner and exits 0', async () => {
    const { dataDir, child, exited, url, token, stderr: stderrOf } = await startServe();
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
    const stream = await client.chat.completions.create({
      model: 'sim/llama-3.2-1b',
      messages: [{ role: 'user', content: 'long' }],
      max_tokens: 100_000,
      stream: true,
    });
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
    expect(stderrOf()).toMatch(/stopped/);
    expect(stderrOf()).not.toContain(token);
    // A clean stop removes the record of where it listened.
    expect(existsSync(join(dataDir, 'server.json'))).toBe(false);
    expect(() => process.kill(runnerPid, 0)).toThrow();
    expect(processesInGroups(groups)).toEqual([]);
  });

  it("--exo-start starts this Mac's exo (--exo-command), says its progress, and on SIGTERM stops it and its runners", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'exobar-cli-'));
    const exoDirs = makeFakeExoDirs();
    dirs.push(dataDir);
    try {
      // exo's port and HOME from settings: the fake exo must not meet a real one (or another test's) on 52415.
      const exoPort = await freePort();
      writeFileSync(join(dataDir, 'settings.json'), JSON.stringify({ exo: { apiPort: exoPort, env: { HOME: exoDirs.home, FAKE_EXO_RUNNERS: '1' } } }));
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
      // Without --exo, the exo it started is attached once its API answers: the cluster is in the snapshot.
      const server = JSON.parse(readFileSync(join(dataDir, 'server.json'), 'utf8')) as { url: string; tokenPath: string };
      const auth = { Authorization: `Bearer ${readFileSync(server.tokenPath, 'utf8').trim()}` };
      await vi.waitFor(
        async () => {
          const state = (await (await fetch(`${server.url}/api/state`, { headers: auth })).json()) as { exo: { connected: boolean; nodes: unknown[] } | null };
          expect(state.exo).toMatchObject({ url: `http://127.0.0.1:${exoPort}`, connected: true });
          expect(state.exo?.nodes).toHaveLength(1);
        },
        { timeout: 10_000, interval: 200 },
      );
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

  it('exobar diagnostics finds it on its --port 0 address through <dataDir>/server.json and writes the live bundle with its diagnosis', async () => {
    const { dataDir, child, exited, url, token } = await startServe();
    const record = JSON.parse(readFileSync(join(dataDir, 'server.json'), 'utf8')) as Record<string, unknown>;
    expect(record).toMatchObject({ url, pid: child.pid, tokenPath: join(dataDir, 'token') });
    expect(JSON.stringify(record)).not.toContain(token);

    const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
    expect((await fetch(`${url}/api/instances?wait=ready`, { method: 'POST', headers, body: JSON.stringify({ model: 'sim/llama-3.2-1b' }) })).status).toBe(201);
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 });
    await client.chat.completions.create({ model: 'sim/llama-3.2-1b', messages: [{ role: 'user', content: 'hello' }], max_tokens: 3 });

    const out = join(dataDir, 'live.zip');
    const io = captureIo();
    expect(await main(['diagnostics', '--out', out, '--data-dir', dataDir, '--threshold-ms', '0'], io), io.errors.join('\n')).toBe(0);
    expect(io.lines[0]).toBe(`exobar diagnostics: live bundle from the server at ${url} (pid ${child.pid})`);
    const manifest = parseBundle(await readZip(out)).json.get('manifest.json') as { source: string; diagnosis: { findings: unknown[] } | null };
    expect(manifest.source).toBe('running node');
    // Threshold 0: the one request is diagnosed.
    expect(manifest.diagnosis?.findings.length).toBeGreaterThanOrEqual(1);

    child.kill('SIGTERM');
    expect(await exited).toEqual({ code: 0, signal: null });
    // With the server gone, the command says why the bundle is the offline one.
    const offline = captureIo();
    expect(await main(['diagnostics', '--out', join(dataDir, 'offline.zip'), '--data-dir', dataDir], offline)).toBe(0);
    // Found through this data directory's record alone: whatever listens on the default port is not asked.
    expect(offline.errors.join('\n')).toMatch(/writing the offline bundle \(no live state, no diagnosis\): no exobar is running for .*: no server has recorded itself in .*server\.json/);
  });

  it('ignores a server record whose process is gone', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'exobar-cli-'));
    dirs.push(dataDir);
    // A pid that cannot be running: a finished child's.
    const gone = spawn(process.execPath, ['-e', '0']);
    await new Promise((resolve) => gone.on('exit', resolve));
    writeFileSync(join(dataDir, 'server.json'), JSON.stringify({ url: 'http://127.0.0.1:1', pid: gone.pid, tokenPath: null, startedAt: 1 }));
    const reading = await readServerRecord(dataDir);
    expect(reading).toEqual({ found: false, reason: expect.stringMatching(new RegExp(`pid ${gone.pid}, which is no longer running`)) });
  });

  it('refuses a second serve on a data directory a running one serves, leaving its records byte for byte', async () => {
    const { dataDir, child, url } = await startServe();
    const records = () => ['server.json', 'runners.json'].map((name) => readFileSync(join(dataDir, name), 'utf8'));
    const before = records();
    const io = captureIo();
    expect(await main(['serve', '--port', '0', '--data-dir', dataDir], io)).toBe(1);
    expect(io.errors.join('\n')).toContain(`exobar serve: ${dataDir} is already served by the exobar at ${url} (pid ${child.pid}); stop it first`);
    expect(records()).toEqual(before);
  });

  it("never replaces the record of another server that runs", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'exobar-cli-'));
    dirs.push(dataDir);
    const theirs = `${JSON.stringify({ url: 'http://127.0.0.1:1', pid: process.pid, tokenPath: null, startedAt: 1 })}\n`;
    writeFileSync(join(dataDir, 'server.json'), theirs);
    await expect(writeServerRecord(dataDir, { url: 'http://127.0.0.1:2', pid: process.pid + 1, tokenPath: null, startedAt: 2 })).rejects.toThrow(
      /names another exobar that runs \(pid \d+ at http:\/\/127\.0\.0\.1:1\): left as it is/,
    );
    expect(readFileSync(join(dataDir, 'server.json'), 'utf8')).toBe(theirs);
  });

  it('answers bad flags with its usage and exit code 2', async () => {
    for (const argv of [
      ['serve', '--exo-command', 'exo'],
      ['serve', '--exo-start', '--exo-command', ''],
      ['serve', '--port', 'abc'],
      ['serve', '--port', '70000'],
      ['serve', '--sim-time-scale', '-1'],
      ['serve', '--nope'],
      ['serve', '--log-format', 'xml'],
      ['serve', 'extra'],
      ['frobnicate'],
      [],
    ]) {
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
