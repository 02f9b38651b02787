import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { Pacer } from './pacer';
import { SharedGpu } from './shared-gpu';

const dirs: string[] = [];
function gpuDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'exobar-shared-gpu-unit-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function timed(work: () => Promise<void>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

describe('SharedGpu', () => {
  it('marks itself busy while computing and clears the marker when idle', async () => {
    const dir = gpuDir();
    const a = new SharedGpu(dir, new Pacer());
    const b = new SharedGpu(dir, new Pacer());
    expect(b.busyOthers()).toBe(0);
    await a.compute(5);
    expect(b.busyOthers()).toBe(1);
    expect(a.busyOthers()).toBe(0);
    a.idle();
    expect(b.busyOthers()).toBe(0);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('stretches GPU work while another runner computes', async () => {
    const dir = gpuDir();
    const a = new SharedGpu(dir, new Pacer());
    const alone = await timed(() => a.compute(120));
    a.idle();
    // Another runner busy for the whole window: its marker is valid for a second.
    writeFileSync(join(dir, `busy.${process.pid}.deadbeef.${Date.now() + 1000}`), '');
    const shared = await timed(() => a.compute(120));
    expect(alone).toBeGreaterThan(100);
    expect(shared / alone).toBeGreaterThan(1.6);
    expect(shared / alone).toBeLessThan(2.6);
  });

  it('ignores expired markers and removes stale ones of dead processes', () => {
    const dir = gpuDir();
    const expiredLive = `busy.${process.pid}.0badc0de.${Date.now() - 10}`;
    // pid 2^22+1 is above Linux's largest pid_max, so it is never a live process.
    const staleDead = `busy.4194305.0badc0de.${Date.now() - 60_000}`;
    for (const name of [expiredLive, staleDead, 'unrelated.txt']) writeFileSync(join(dir, name), '');
    const gpu = new SharedGpu(dir, new Pacer());
    expect(gpu.busyOthers()).toBe(0);
    expect(readdirSync(dir).sort()).toEqual([expiredLive, 'unrelated.txt'].sort());
  });
});
