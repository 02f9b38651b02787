/**
 * `exobar check sharing` beside a running `exobar serve` of the same data directory (both
 * real processes, built JS, sim runners): the check runs in that server, through its
 * control API, on the two models it serves. The command starts no runner of its own,
 * the server's instances and runners are the same before and after, and its records
 * (`server.json`, `runners.json`) are left byte for byte as they were. When the server
 * cannot be asked (its token refused), or a running exobar owns the directory's runners
 * without a record to find it by, the command refuses in words and starts nothing.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SharingCheckResultSchema } from '../../shared/sharing-check';
import { processStartTime } from '../core/process/process-identity';
import { main } from './cli';
import { sleep } from '../../test/support/eventually';
import { startServe, type ServeProcess } from '../../test/support/e2e/serve-process';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'exobar.js');
const MODELS = ['sim/llama-3.2-3b', 'sim/llama-3.2-1b'];
const dataDir = mkdtempSync(join(tmpdir(), 'exobar-check-beside-'));
let serve: ServeProcess;

async function instances(): Promise<{ id: string; model: string; runnerPid: number }[]> {
  const response = await fetch(`${serve.url}/api/state`, { headers: { Authorization: `Bearer ${serve.token}` } });
  const state = (await response.json()) as { instances: { id: string; model: string; source: string; runner: { pid: number } }[] };
  return state.instances.filter((i) => i.source === 'local').map((i) => ({ id: i.id, model: i.model, runnerPid: i.runner.pid }));
}

/** The runner processes whose parent is `pid`. */
function runnerChildren(pid: number): string[] {
  return execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((cols) => Number(cols[1]) === pid && /runner/.test(cols.slice(2).join(' ')))
    .map((cols) => cols.join(' '));
}

/**
 * Runs `exobar check sharing ARGS` on the data directory to its end, noting every runner
 * it has as a child while it runs (a check that started its own copies of the models
 * holds them for its whole run).
 */
async function check(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string; runners: string[] }> {
  const child = spawn(process.execPath, [BIN, 'check', 'sharing', '--data-dir', dataDir, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, EXOBAR_TOKEN: '', ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const runners = new Set<string>();
  let done = false;
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => ((done = true), resolve(code))));
  while (!done) {
    for (const runner of runnerChildren(child.pid!)) runners.add(runner);
    await Promise.race([exited, sleep(100)]);
  }
  return { code: await exited, stdout, stderr, runners: [...runners] };
}

const records = () => ({ server: readFileSync(join(dataDir, 'server.json')), runners: readFileSync(join(dataDir, 'runners.json')) });

beforeAll(async () => {
  serve = await startServe({ simTimeScale: 0.1, dataDir });
  const headers = { Authorization: `Bearer ${serve.token}`, 'Content-Type': 'application/json' };
  for (const model of MODELS) {
    const created = await fetch(`${serve.url}/api/instances?wait=ready`, { method: 'POST', headers, body: JSON.stringify({ model }) });
    expect(created.status, await created.text()).toBe(201);
  }
}, 120_000);

afterAll(async () => {
  await serve?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('exobar check sharing beside a running exobar serve of the same data directory', () => {
  it('runs the check in that server on its two models: same instances before and after, no runner of its own, its records untouched', async () => {
    const before = await instances();
    expect(before.map((i) => i.model).sort()).toEqual([...MODELS].sort());
    const recordsBefore = records();
    expect((JSON.parse(recordsBefore.runners.toString()) as { owner: { pid: number } }).owner.pid).toBe(serve.pid);

    const { code, stdout, stderr, runners } = await check(['--json', '--experiments', 'ttft', '--prompt-tokens', '2000']);
    expect(code, stderr).toBe(0);
    expect(stderr).toContain(`running the check in the server recorded in ${join(dataDir, 'server.json')} (pid ${serve.pid})`);
    expect(runners).toEqual([]);
    const result = SharingCheckResultSchema.parse(JSON.parse(stdout));
    expect(result.models.map((m) => m.id)).toEqual(MODELS);
    expect([...result.instancesBefore].sort()).toEqual(before.map((i) => i.id).sort());
    expect([...result.instancesAfter].sort()).toEqual(before.map((i) => i.id).sort());
    if (!result.ttft.ran) throw new Error('experiment 1 did not run');
    expect(result.ttft.bAloneS).toBeGreaterThan(0);

    // The server's instances are the same runners; its records are byte for byte as they were.
    expect(await instances()).toEqual(before);
    const recordsAfter = records();
    expect(recordsAfter.server.equals(recordsBefore.server)).toBe(true);
    expect(recordsAfter.runners.equals(recordsBefore.runners)).toBe(true);
    // The report is kept where the page's are: the server's checks folder.
    expect(readFileSync(join(dataDir, 'checks', `${result.id}.json`), 'utf8')).toContain(result.id);
  }, 180_000);

  it('refuses in words (exit 1) when the server refuses its token, and starts nothing', async () => {
    const before = await instances();
    const recordsBefore = records();
    const { code, stderr, runners } = await check(['--experiments', 'ttft', '--prompt-tokens', '2000'], { EXOBAR_TOKEN: 'wrong' });
    expect(code).toBe(1);
    expect(stderr).toContain(`exobar check sharing: refused: exobar at ${serve.url} refused the token from EXOBAR_TOKEN (the environment)`);
    expect(stderr).toContain('runs through it or not at all');
    expect(runners).toEqual([]);
    expect(await instances()).toEqual(before);
    const recordsAfter = records();
    expect(recordsAfter.server.equals(recordsBefore.server)).toBe(true);
    expect(recordsAfter.runners.equals(recordsBefore.runners)).toBe(true);
  }, 60_000);
});

describe('exobar check sharing in a data directory whose runners a running exobar owns, with no server record', () => {
  it('refuses in words (exit 1), writes no record and leaves runners.json as it was', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'exobar-check-owned-'));
    // A live process as the owner the file names (an exobar still starting, or one that could not record its address).
    const owner = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      const startTime = await processStartTime(owner.pid!);
      const runners = `${JSON.stringify({ owner: { pid: owner.pid, startTime }, runners: [] })}\n`;
      writeFileSync(join(dir, 'runners.json'), runners);
      const errors: string[] = [];
      const code = await main(['check', 'sharing', '--experiments', 'ttft', '--data-dir', dir], { out: () => undefined, err: (l) => errors.push(l), env: {} });
      expect(code).toBe(1);
      expect(errors.join('\n')).toContain(`exobar check sharing: refused: exobar pid ${owner.pid} runs the models of ${dir} but has recorded no address to ask`);
      expect(readFileSync(join(dir, 'runners.json'), 'utf8')).toBe(runners);
      expect(existsSync(join(dir, 'server.json'))).toBe(false);
    } finally {
      owner.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
