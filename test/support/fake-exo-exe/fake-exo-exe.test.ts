/** The fake exo behaves as exo does where exobar depends on it. */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FAKE_EXO_COMMAND, killAll, makeFakeExoDirs, processesWithHome, type FakeExoDirs } from './harness';
import { eventually } from '../eventually';
import { readReal } from '../fake-exo/real-captures';
import { freePort } from '../free-port';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function dirs(): FakeExoDirs {
  const d = makeFakeExoDirs();
  cleanups.push(() => {
    killAll(processesWithHome(d.home));
    d.remove();
  });
  return d;
}

function run(args: string[], env: Record<string, string>): { child: ChildProcess; output: () => string; exit: Promise<number | null> } {
  const child = spawn(FAKE_EXO_COMMAND, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout!.on('data', (c: Buffer) => (text += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (text += c.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { child, output: () => text, exit };
}

describe('fake exo', () => {
  it("rejects flags exo's argparse rejects, with exit code 2", async () => {
    const d = dirs();
    const both = run(['--fast-synch', '--no-fast-synch'], { HOME: d.home });
    expect(await both.exit).toBe(2);
    expect(both.output()).toMatch(/EXO: error: argument --no-fast-synch: not allowed with argument --fast-synch/);
    const unknown = run(['--bogus'], { HOME: d.home });
    expect(await unknown.exit).toBe(2);
  });

  it('keeps its files under $HOME/$EXO_HOME and exits 1 on a second signal during its shutdown', async () => {
    const d = dirs();
    const port = await freePort();
    const exo = run(['--api-port', String(port)], { HOME: d.home, EXO_HOME: 'exo-data', FAKE_EXO_SHUTDOWN_MS: '5000', FAKE_EXO_RUNNERS: '0' });
    await eventually(() => exo.output().includes('Running on'), 20_000, 'the API');
    expect(existsSync(join(d.home, 'exo-data', 'exo.pid'))).toBe(true);
    exo.child.kill('SIGINT');
    await eventually(() => exo.output().includes('shutting down'), 20_000, 'the shutdown');
    exo.child.kill('SIGTERM');
    expect(await exo.exit).toBe(1);
    expect(exo.output()).toMatch(/Received SIGTERM again: exiting now/);
  });

  it("serves the fake exo's API over one Mac with nothing placed, as exo answers it", async () => {
    const d = dirs();
    const port = await freePort();
    const exo = run(['--api-port', String(port)], { HOME: d.home, FAKE_EXO_RUNNERS: '0' });
    cleanups.push(() => killAll([exo.child.pid!]));
    await eventually(() => exo.output().includes('Running on'), 20_000, 'the API');
    const nodeId = (await (await fetch(`http://127.0.0.1:${port}/node_id`)).json()) as string;
    expect(nodeId).toMatch(/^[0-9a-f]{32}$/);
    const state = (await (await fetch(`http://127.0.0.1:${port}/state`)).json()) as Record<string, Record<string, unknown>>;
    // Every top-level key of the real capture, in its order.
    expect(Object.keys(state)).toEqual(Object.keys(readReal('state-ready.json')));
    expect(state.instances).toEqual({});
    expect(state.topology).toMatchObject({ nodes: [nodeId] });
    expect(state.nodeIdentities![nodeId]).toMatchObject({ friendlyName: 'fake-exo' });
    const missing = await fetch(`http://127.0.0.1:${port}/state/nodeMemory/nobody`);
    expect(missing.status).toBe(404);
  });
});
