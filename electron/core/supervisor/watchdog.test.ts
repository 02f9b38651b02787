import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { findSimModel } from '../../../shared/catalog';
import { RunnerRates, ratePriorFor, UNKNOWN_MODEL_PRIOR } from './runner-rates';
import { DEFAULT_WATCHDOG_LIMITS, Watchdog, watchdogDeadlineMs, type WatchdogFiring } from './watchdog';

const LIMITS = { ...DEFAULT_WATCHDOG_LIMITS, floorMs: 5000, prefillMs: 600_000, decodeMs: 120_000, safetyFactor: 4 };
const B3 = findSimModel('sim/llama-3.2-3b')!;

describe('watchdog deadline', () => {
  it('is the expected step times the safety factor, stretched per GPU sharer, clamped to floor and ceiling', () => {
    expect(watchdogDeadlineMs(LIMITS, { phase: 'prefill', expectedStepMs: 3000 }, 0)).toBe(12_000);
    expect(watchdogDeadlineMs(LIMITS, { phase: 'prefill', expectedStepMs: 3000 }, 1)).toBe(24_000);
    expect(watchdogDeadlineMs(LIMITS, { phase: 'prefill', expectedStepMs: 100 }, 1)).toBe(5000);
    expect(watchdogDeadlineMs(LIMITS, { phase: 'decode', expectedStepMs: 60_000 }, 0)).toBe(120_000);
    expect(watchdogDeadlineMs(LIMITS, { phase: 'lifecycle' }, 3)).toBe(LIMITS.lifecycleMs);
    // A ceiling below the floor wins: the operator asked for a short limit.
    expect(watchdogDeadlineMs({ ...LIMITS, prefillMs: 600 }, { phase: 'prefill', expectedStepMs: 1 }, 0)).toBe(600);
  });

  it('the 3B at time scale 1: a short prompt is caught at the floor, a 4096-token chunk beside the 1B gets far more than it needs', () => {
    const rates = new RunnerRates(ratePriorFor(B3, 1));
    const short = watchdogDeadlineMs(LIMITS, { phase: 'prefill', expectedStepMs: rates.prefillStepMs(30, 1) }, 1);
    expect(short).toBe(5000);
    const chunkMs = (4096 / B3.sim!.prefillTokensPerS) * 1000;
    const chunk = watchdogDeadlineMs(LIMITS, { phase: 'prefill', expectedStepMs: rates.prefillStepMs(4096, 1) }, 1);
    // Beside another runner a chunk takes about twice as long; the deadline is well above that.
    expect(chunk).toBeGreaterThan(2 * chunkMs * 2);
  });
});

describe('runner rates', () => {
  it('start at the catalog prior, scaled for the sim', () => {
    const rates = new RunnerRates(ratePriorFor(B3, 0.1));
    expect(rates.estimates().msPerPromptToken).toBeCloseTo(100 / 1590, 6);
    expect(rates.decodeStepMs(1)).toBeCloseTo(0.9, 6);
    expect(new RunnerRates(ratePriorFor({ ...B3, sim: undefined, engine: 'mlx' }, 1)).prior).toEqual(UNKNOWN_MODEL_PRIOR);
  });

  it('follow what the runner measures: a runner twice as slow as its prior soon has a deadline about twice as long', () => {
    const rates = new RunnerRates(ratePriorFor(B3, 1));
    const before = rates.prefillStepMs(4096, 1);
    for (let i = 0; i < 20; i++) rates.recordPrefillChunk(4096, (2 * 4096 * 1000) / 1590, false);
    const after = rates.prefillStepMs(4096, 1);
    expect(after / before).toBeGreaterThan(1.7);
    for (let i = 0; i < 20; i++) rates.recordDecodeStep(90, 1);
    expect(rates.decodeStepMs(1)).toBeGreaterThan(60);
    // Recent history only: a faster spell brings it back down.
    for (let i = 0; i < 20; i++) rates.recordPrefillChunk(4096, (4096 * 1000) / 1590, false);
    expect(rates.prefillStepMs(4096, 1) / before).toBeLessThan(1.3);
  });
});

describe('watchdog under a starved node', () => {
  it('does not blame the runner for the silence of a node that was starved while the runner wrote', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'exobar-watchdog-'));
    const wrote = join(dir, 'wrote');
    // A "runner" that answers each line with a line, then marks that it has written.
    const child = spawn(
      process.execPath,
      [
        '-e',
        `require('readline').createInterface({ input: process.stdin }).on('line', () => { process.stdout.write('progress\\n', () => require('fs').writeFileSync(${JSON.stringify(wrote)}, '')); });`,
      ],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    const firings: WatchdogFiring[] = [];
    const deadlineMs = 100;
    const watchdog = new Watchdog(
      { ...DEFAULT_WATCHDOG_LIMITS, floorMs: deadlineMs },
      () => ({ phase: 'decode', deadlineMs }),
      (f) => firings.push(f),
    );
    const lines = createInterface({ input: child.stdout! });
    let seen = 0;
    lines.on('line', () => {
      seen += 1;
      watchdog.outputSeen();
    });
    try {
      watchdog.start();
      child.stdin!.write('step\n');
      // The node is starved (its loop blocked) well past the deadline, and the runner's
      // line is in the pipe by then, unread: an event, not a window, ends the block.
      const blockedAt = performance.now();
      while (!existsSync(wrote) || performance.now() - blockedAt < 5 * deadlineMs) {
        /* starved */
      }
      // The first turn of the loop reads the line before the watchdog judges.
      await new Promise<void>((resolve) => lines.once('line', () => setImmediate(resolve)));
      expect(seen).toBe(1);
      expect(firings).toEqual([]);
    } finally {
      watchdog.stop();
      child.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
