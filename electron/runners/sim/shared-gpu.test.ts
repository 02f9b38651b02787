import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

/**
 * A pacer that records the GPU time each slice asked for and returns at once: what the
 * sharing decides is the stretch, and it is read exactly, not through a loaded machine's
 * clock (the Pacer's own timing is the sim calibration's concern).
 */
class RecordingPacer extends Pacer {
  waited: number[] = [];
  override async wait(ms: number): Promise<void> {
    this.waited.push(ms);
  }
  total(): number {
    return this.waited.reduce((a, b) => a + b, 0);
  }
}

describe('SharedGpu', () => {
  it('marks itself busy while computing and clears the marker when idle', async () => {
    const dir = gpuDir();
    const a = new SharedGpu(dir, new RecordingPacer());
    const b = new SharedGpu(dir, new RecordingPacer());
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
    const pacer = new RecordingPacer();
    const a = new SharedGpu(dir, pacer);
    await a.compute(120);
    const alone = pacer.total();
    a.idle();
    // Another runner busy for the whole window: its marker is valid for a minute.
    writeFileSync(join(dir, `busy.${process.pid}.deadbeef.${Date.now() + 60_000}`), '');
    pacer.waited = [];
    await a.compute(120);
    expect(alone).toBe(120);
    // Every slice stretched by 1 + one other busy runner.
    expect(pacer.total()).toBe(240);
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
