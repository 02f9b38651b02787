/**
 * The decode-first policy's decisions, driven through phase changes of scripted
 * runners: it engages only while a neighbour decodes, releases when the neighbour stops
 * or the prefill ends, never paces a prefill past its ceiling, and leaves a runner of
 * protocol 1 alone. (node-pacing.test.ts runs the same policy with real sim runners.)
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FULL_SPEED_PACING, type PrefillPacing } from '../../../shared/runner-protocol';
import type { SharingPolicy } from '../../../shared/sharing-policy';
import type { NewNodeEvent } from '../node/node-event';
import type { GpuPhase } from '../sharing/instance-phases';
import { PacingController, type PacedRunner } from './pacing-controller';
import { addedFraction, fullSpeedPrefillMs, pacedPacing } from './pacing-plan';

/** 0.25 ms per prompt token, 10 ms fixed; 12 ms decode steps. */
const RATES = { prefillStepMs: (tokens: number, batch: number) => 10 + tokens * 0.25 + 12 * batch, decodeStepMs: () => 12 };

class ScriptedRunner implements PacedRunner {
  current: GpuPhase = 'idle';
  sent: PrefillPacing[] = [];
  remaining = 0;
  private readonly listeners = new Set<() => void>();
  readonly supervisor: PacedRunner['supervisor'];

  constructor(
    readonly id: string,
    readonly label: string,
    protocolVersion = 2,
  ) {
    const sent = this.sent;
    this.supervisor = {
      supportsPacing: protocolVersion >= 2,
      setPrefillPacing(pacing) {
        if (protocolVersion < 2) return null;
        sent.push(pacing);
        return `p-${sent.length}`;
      },
      rates: RATES,
    };
  }

  phase(): GpuPhase {
    return this.current;
  }

  onPhaseChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  prefillRemainingTokens(): number {
    return this.remaining;
  }

  set(phase: GpuPhase, remaining = this.remaining): void {
    this.remaining = remaining;
    this.current = phase;
    for (const listener of this.listeners) listener();
  }
}

let now = 0;
let policy: SharingPolicy = 'decode_first';
let events: NewNodeEvent[] = [];

function controllerOf(...runners: ScriptedRunner[]): PacingController {
  const controller = new PacingController({ runners: () => runners, policy: () => policy, log: (e) => events.push(e), now: () => now });
  for (const runner of runners) controller.add(runner);
  return controller;
}

const kinds = () => events.map((e) => e.kind);

beforeEach(() => {
  vi.useFakeTimers();
  now = 0;
  policy = 'decode_first';
  events = [];
});
afterEach(() => {
  vi.useRealTimers();
});

describe('decode-first pacing', () => {
  it('engages only while a neighbour decodes and releases when it stops', () => {
    const a = new ScriptedRunner('a', 'Llama 3.2 3B');
    const b = new ScriptedRunner('b', 'Llama 3.2 1B');
    controllerOf(a, b);

    // A prefills with nobody decoding: full speed, nothing sent.
    a.set('prefilling', 30_000);
    expect(a.sent).toEqual([]);
    // A neighbour that only prefills is no reason either.
    b.set('prefilling', 20);
    expect(a.sent).toEqual([]);

    // B streams: A is paced.
    b.set('decoding');
    expect(a.sent).toHaveLength(1);
    expect(a.sent[0]!.chunkTokens).toBeLessThan(4096);
    expect(a.sent[0]!.pauseMs).toBeGreaterThan(0);
    expect(b.sent).toEqual([]);
    expect(events.at(-1)).toMatchObject({ kind: 'pacing_engaged', instanceId: 'a', data: { model: 'Llama 3.2 3B', neighbours: ['Llama 3.2 1B'] } });

    // B stops: A back to full speed, with why and what it cost.
    now += 2000;
    b.set('idle');
    expect(a.sent.at(-1)).toEqual(FULL_SPEED_PACING);
    expect(events.at(-1)).toMatchObject({ kind: 'pacing_released', instanceId: 'a', data: { reason: 'neighbour_stopped', pacedMs: 2000 } });
    const released = events.at(-1) as Extract<NewNodeEvent, { kind: 'pacing_released' }>;
    expect(released.data.addedMs).toBe(Math.round(2000 * addedFraction(a.sent[0]!, RATES)));

    // B streams again while A still prefills: paced again.
    b.set('decoding');
    expect(a.sent).toHaveLength(3);
    expect(a.sent.at(-1)!.pauseMs).toBeGreaterThan(0);
    // A's prefill ends: released, and its next prompt starts at full speed.
    a.set('decoding', 0);
    expect(a.sent.at(-1)).toEqual(FULL_SPEED_PACING);
    expect(events.at(-1)).toMatchObject({ kind: 'pacing_released', data: { reason: 'prefill_done' } });
    expect(kinds()).toEqual(['pacing_engaged', 'pacing_released', 'pacing_engaged', 'pacing_released']);
  });

  it('never paces a prefill past its ceiling: full speed once the added time reaches it, until that prefill ends', () => {
    const a = new ScriptedRunner('a', 'A');
    const b = new ScriptedRunner('b', 'B');
    controllerOf(a, b);
    a.set('prefilling', 30_000);
    b.set('decoding');
    const paced = a.sent[0]!;
    const fraction = addedFraction(paced, RATES);
    const budgetMs = 0.15 * fullSpeedPrefillMs(30_000, RATES);
    // Just before the budget is spent: still paced.
    const untilCeiling = budgetMs / fraction;
    vi.advanceTimersByTime(untilCeiling - 5);
    expect(a.sent).toHaveLength(1);
    now += untilCeiling;
    vi.advanceTimersByTime(10);
    expect(a.sent.at(-1)).toEqual(FULL_SPEED_PACING);
    const released = events.at(-1) as Extract<NewNodeEvent, { kind: 'pacing_released' }>;
    expect(released).toMatchObject({ kind: 'pacing_released', data: { reason: 'ceiling' } });
    expect(released.data.addedPct).toBeCloseTo(15, 0);

    // The neighbour keeps streaming, stops and starts again: this prefill stays at full speed.
    b.set('idle');
    b.set('decoding');
    expect(a.sent).toHaveLength(2);
    // The budget spent in two paced stretches adds up to the same ceiling.
    a.set('idle', 0);
    a.set('prefilling', 30_000);
    expect(a.sent.at(-1)!.pauseMs).toBeGreaterThan(0);
    now += untilCeiling / 2;
    b.set('idle');
    b.set('decoding');
    now += untilCeiling / 2 - 1;
    vi.advanceTimersByTime(untilCeiling / 2 - 2);
    expect(a.sent.at(-1)!.pauseMs).toBeGreaterThan(0);
    now += 2;
    vi.advanceTimersByTime(5);
    expect(a.sent.at(-1)).toEqual(FULL_SPEED_PACING);
    expect(events.at(-1)).toMatchObject({ kind: 'pacing_released', data: { reason: 'ceiling' } });
  });

  it('leaves a runner of protocol 1 alone, and paces nobody with the policy off', () => {
    const old = new ScriptedRunner('old', 'Old', 1);
    const b = new ScriptedRunner('b', 'B');
    controllerOf(old, b);
    old.set('prefilling', 30_000);
    b.set('decoding');
    expect(old.sent).toEqual([]);
    expect(events).toEqual([]);

    policy = 'off';
    const a = new ScriptedRunner('a', 'A');
    const c = new ScriptedRunner('c', 'C');
    controllerOf(a, c);
    a.set('prefilling', 30_000);
    c.set('decoding');
    expect(a.sent).toEqual([]);
    // Turned on while A prefills beside a stream: paced at the next decision; off again: released.
    policy = 'decode_first';
    c.set('decoding');
    expect(a.sent).toHaveLength(1);
    policy = 'off';
    a.set('prefilling');
    expect(a.sent.at(-1)).toEqual(FULL_SPEED_PACING);
    expect(events.at(-1)).toMatchObject({ kind: 'pacing_released', data: { reason: 'policy_off' } });
  });
});

describe('the pacing plan', () => {
  it('cuts chunks to about chunkMs of work and pauses for about one neighbour decode step, within the protocol limits', () => {
    expect(pacedPacing(RATES, 12, { chunkMs: 64, pausePerDecodeStep: 1.5, maxPauseMs: 60, ceiling: 0.15 })).toEqual({ chunkTokens: 256, pauseMs: 18 });
    // A very fast prefill: never more than the runner's own chunk; a very slow one: never below 64 tokens.
    expect(pacedPacing({ ...RATES, prefillStepMs: (t) => t * 0.001 }, 12).chunkTokens).toBe(4096);
    expect(pacedPacing({ ...RATES, prefillStepMs: (t) => t * 50 }, 12).chunkTokens).toBe(64);
    expect(pacedPacing(RATES, 10_000).pauseMs).toBe(60);
  });
});
