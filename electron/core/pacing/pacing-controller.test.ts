/**
 * The adaptive decode-first policy's decisions, driven through phase changes and token
 * gaps of scripted runners: it engages only while a neighbour decodes AND that
 * neighbour's live ITL beside the prefill is above its solo ITL (1.2×, hysteresis down
 * to 1.05×), releases when the neighbour stops or recovers or the prefill ends, never
 * paces a prefill past its ceiling, does nothing where the prefill does not slow the
 * stream, and leaves a runner of protocol 1 alone. (node-pacing.test.ts runs the same
 * policy with real sim runners.)
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FULL_SPEED_PACING, type PrefillPacing } from '../../../shared/runner-protocol';
import type { SharingPolicy } from '../../../shared/sharing-policy';
import type { NewNodeEvent } from '../events/node-event';
import type { GpuPhase } from '../sharing/instance-phases';
import { PacingController, type PacedRunner } from './pacing-controller';
import type { SoloItl } from './live-itl';
import { addedFraction, DEFAULT_PACING_TUNING, fullSpeedPrefillMs, pacedPacing } from './pacing-plan';

/** 0.25 ms per prompt token, 10 ms fixed; 12 ms decode steps. */
const RATES = { prefillStepMs: (tokens: number, batch: number) => 10 + tokens * 0.25 + 12 * batch, decodeStepMs: () => 12 };

class ScriptedRunner implements PacedRunner {
  current: GpuPhase = 'idle';
  sent: PrefillPacing[] = [];
  remaining = 0;
  /** Its solo decode: 12 ms gaps, plenty of them. */
  solo: SoloItl = { gaps: 200, itlP50Ms: 12 };
  /** Its calibrated ITL alone (the catalog's figure); null: a model outside the catalog. */
  calibrated: number | null = 12;
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

  soloItl(): SoloItl {
    return this.solo;
  }

  calibratedItlMs(): number | null {
    return this.calibrated;
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
let controller: PacingController;

function controllerOf(...runners: ScriptedRunner[]): PacingController {
  controller = new PacingController({ runners: () => runners, policy: () => policy, log: (e) => events.push(e), now: () => now });
  for (const runner of runners) controller.add(runner);
  return controller;
}

/** `count` gaps of `gapMs` in `runner`'s stream while a neighbour prefills, each at `stepMs` after the last. */
function gaps(runner: ScriptedRunner, gapMs: number, count = 6, stepMs = 0): void {
  for (let i = 0; i < count; i++) {
    now += stepMs;
    controller.observeGap(runner.id, gapMs, true);
  }
}

/** A prefilling beside B streaming at `gapMs` (solo 12 ms): paced once B's window is full. */
function pacedPair(gapMs: number): { a: ScriptedRunner; b: ScriptedRunner } {
  const a = new ScriptedRunner('a', 'A');
  const b = new ScriptedRunner('b', 'B');
  controllerOf(a, b);
  a.set('prefilling', 30_000);
  b.set('decoding');
  gaps(b, gapMs);
  return { a, b };
}

const kinds = () => events.map((e) => e.kind);
const last = <K extends NewNodeEvent['kind']>(kind: K) => events.filter((e) => e.kind === kind).at(-1) as Extract<NewNodeEvent, { kind: K }>;

beforeEach(() => {
  vi.useFakeTimers();
  now = 0;
  policy = 'decode_first';
  events = [];
});
afterEach(() => {
  vi.useRealTimers();
});

describe('adaptive decode-first pacing', () => {
  it('engages only while a neighbour decodes and its live ITL is above its solo ITL, and releases when it stops', () => {
    const a = new ScriptedRunner('a', 'Llama 3.2 3B');
    const b = new ScriptedRunner('b', 'Llama 3.2 1B');
    controllerOf(a, b);

    // A prefills with nobody decoding: full speed, nothing sent.
    a.set('prefilling', 30_000);
    expect(a.sent).toEqual([]);
    // A neighbour that only prefills is no reason either.
    b.set('prefilling', 20);
    expect(a.sent).toEqual([]);

    // B streams, at its solo ITL, then 1.15× it (below the 1.2× threshold): not paced.
    b.set('decoding');
    gaps(b, 12, 10);
    gaps(b, 13.8, 10);
    expect(a.sent).toEqual([]);
    // B's gaps beside A's prefill grow to 1.5× solo: once the median of its last six is past 1.2×, A is paced, and the event says by what figure.
    gaps(b, 18, 2);
    expect(a.sent).toEqual([]); // the median of the last six gaps decides, not one slow step
    gaps(b, 18, 1);
    expect(a.sent).toHaveLength(1);
    expect(a.sent[0]!.chunkTokens).toBeLessThan(4096);
    expect(a.sent[0]!.pauseMs).toBeGreaterThan(0);
    expect(b.sent).toEqual([]);
    expect(last('pacing_engaged')).toMatchObject({
      instanceId: 'a',
      data: { model: 'Llama 3.2 3B', neighbours: ['Llama 3.2 1B'], trigger: { neighbour: 'Llama 3.2 1B', itlMs: 15.9, soloItlMs: 12, ratio: 1.325 } },
    });
    expect(controller.pacedNow('a')).toMatchObject({ neighbours: ['Llama 3.2 1B'], trigger: { ratio: 1.325 } });

    // B stops: A back to full speed, with why and what it cost.
    now += 2000;
    b.set('idle');
    expect(a.sent.at(-1)).toEqual(FULL_SPEED_PACING);
    expect(controller.pacedNow('a')).toBeNull();
    expect(last('pacing_released')).toMatchObject({ kind: 'pacing_released', instanceId: 'a', data: { reason: 'neighbour_stopped', pacedMs: 2000 } });
    expect(last('pacing_released').data.addedMs).toBe(Math.round(2000 * addedFraction(a.sent[0]!, RATES)));

    // B streams again while A still prefills: its live ITL starts afresh, so no pacing until it is slow again.
    b.set('decoding');
    expect(a.sent).toHaveLength(2);
    gaps(b, 20, 6);
    expect(a.sent).toHaveLength(3);
    expect(a.sent.at(-1)!.pauseMs).toBeGreaterThan(0);
    // A's prefill ends: released, and its next prompt starts at full speed.
    a.set('decoding', 0);
    expect(a.sent.at(-1)).toEqual(FULL_SPEED_PACING);
    expect(last('pacing_released')).toMatchObject({ data: { reason: 'prefill_done' } });
    expect(kinds()).toEqual(['pacing_engaged', 'pacing_released', 'pacing_engaged', 'pacing_released']);
  });

  it("releases when the stream's ITL comes back near solo (hysteresis: on at 1.2×, off at 1.05×, after a dwell that doubles per engagement), and paces again if it degrades", () => {
    const { a, b } = pacedPair(24);
    expect(a.sent).toHaveLength(1);
    // Back at 1.0× solo at once, but within the 500 ms dwell since it engaged: still paced.
    gaps(b, 12, 6, 50);
    expect(a.sent).toHaveLength(1);
    // Past the dwell: released, with the figure that decided it.
    gaps(b, 12, 1, 300);
    expect(a.sent.at(-1)).toEqual(FULL_SPEED_PACING);
    expect(last('pacing_released')).toMatchObject({
      instanceId: 'a',
      data: { reason: 'neighbour_recovered', itl: { neighbour: 'B', itlMs: 12, soloItlMs: 12, ratio: 1 } },
    });
    // At full speed B's stream slows again: paced again.
    gaps(b, 30, 3, 10);
    expect(a.sent).toHaveLength(3);
    expect(a.sent.at(-1)!.pauseMs).toBeGreaterThan(0);
    // Paced, B at 1.08× solo, long past the dwell: between the thresholds, the decision holds.
    const engagedAt = now;
    gaps(b, 13, 8, 100);
    expect(a.sent).toHaveLength(3);
    // A second engagement of the same prefill dwells twice as long (1000 ms) before a recovery may release it.
    gaps(b, 12, 6, 10);
    expect(now - engagedAt).toBe(860);
    expect(a.sent).toHaveLength(3);
    gaps(b, 12, 1, 140);
    expect(a.sent.at(-1)).toEqual(FULL_SPEED_PACING);
    expect(kinds()).toEqual(['pacing_engaged', 'pacing_released', 'pacing_engaged', 'pacing_released']);
  });

  it('does not pace where the prefill does not slow the stream (at rest on idle cores), and says so once, with the figure', () => {
    const a = new ScriptedRunner('a', 'tiny mamba2');
    const b = new ScriptedRunner('b', 'tiny llama');
    controllerOf(a, b);
    b.set('decoding');
    a.set('prefilling', 30_000);
    for (let i = 0; i < 50; i++) gaps(b, i % 2 === 0 ? 11.5 : 13, 1, 20);
    // One slow step of a busy machine is not interference.
    gaps(b, 60, 1, 20);
    expect(a.sent).toEqual([]);
    a.set('decoding', 0);
    expect(a.sent).toEqual([]);
    expect(events).toEqual([
      {
        kind: 'pacing_not_needed',
        instanceId: 'a',
        data: {
          model: 'tiny mamba2',
          neighbours: ['tiny llama'],
          peak: expect.objectContaining({ neighbour: 'tiny llama', soloItlMs: 12 }),
          engageItlRatio: 1.2,
        },
      },
    ]);
    const peak = last('pacing_not_needed').data.peak!;
    expect(peak.ratio).toBeGreaterThan(1);
    expect(peak.ratio).toBeLessThan(1.2);

    // A stream with no solo window, no earlier solo figure and no calibrated one: interference
    // is unknown, and unknown is not paced (the card says pacing waits for a baseline).
    events = [];
    const c = new ScriptedRunner('c', 'tiny mamba2');
    const d = new ScriptedRunner('d', 'unknown model');
    d.solo = { gaps: 2, itlP50Ms: 12 };
    d.calibrated = null;
    controllerOf(c, d);
    d.set('decoding');
    expect(controller.waitingForBaseline('d')).toBe(true);
    c.set('prefilling', 30_000);
    gaps(d, 40, 12, 20);
    expect(c.sent).toEqual([]);
    c.set('idle', 0);
    expect(events).toEqual([
      { kind: 'pacing_not_needed', instanceId: 'c', data: { model: 'tiny mamba2', neighbours: ['unknown model'], peak: null, engageItlRatio: 1.2 } },
    ]);
  });

  it('paces a stream busy from its first request against its calibrated ITL: no solo window is needed', () => {
    // The README's scenario: the 1B streams from the start while the 3B prefills 60k tokens.
    const a = new ScriptedRunner('a', 'Llama 3.2 3B');
    const b = new ScriptedRunner('b', 'Llama 3.2 1B');
    b.solo = { gaps: 0, itlP50Ms: null };
    controllerOf(a, b);
    b.set('decoding');
    a.set('prefilling', 60_000);
    expect(controller.waitingForBaseline('b')).toBe(false);
    gaps(b, 30);
    expect(a.sent).toHaveLength(1);
    expect(last('pacing_engaged').data).toMatchObject({ trigger: { neighbour: 'Llama 3.2 1B', soloItlMs: 12, ratio: 2.5 } });
  });

  it('keeps the solo ITL it last trusted once the window has no solo gaps left', () => {
    const a = new ScriptedRunner('a', 'Llama 3.2 3B');
    const b = new ScriptedRunner('b', 'Llama 3.2 1B');
    b.calibrated = null;
    b.solo = { gaps: 200, itlP50Ms: 10 };
    controllerOf(a, b);
    b.set('decoding');
    a.set('prefilling', 30_000);
    gaps(b, 11, 6);
    expect(a.sent).toEqual([]);
    // Busy ever since: the window's solo gaps aged out, the earlier figure still stands.
    b.solo = { gaps: 0, itlP50Ms: null };
    gaps(b, 25, 6);
    expect(a.sent).toHaveLength(1);
    expect(last('pacing_engaged').data).toMatchObject({ trigger: { soloItlMs: 10 } });
  });

  it('never paces a prefill past its ceiling: full speed once the added time reaches it, until that prefill ends', () => {
    const { a, b } = pacedPair(30);
    const paced = a.sent[0]!;
    const fraction = addedFraction(paced, RATES);
    const budgetMs = 0.15 * fullSpeedPrefillMs(30_000, RATES);
    // Just before the budget is spent: still paced, however slow B stays.
    const untilCeiling = budgetMs / fraction;
    vi.advanceTimersByTime(untilCeiling - 5);
    gaps(b, 30);
    expect(a.sent).toHaveLength(1);
    now += untilCeiling;
    vi.advanceTimersByTime(10);
    expect(a.sent.at(-1)).toEqual(FULL_SPEED_PACING);
    const released = last('pacing_released');
    expect(released).toMatchObject({ kind: 'pacing_released', data: { reason: 'ceiling' } });
    expect(released.data.addedPct).toBeCloseTo(15, 0);

    // The neighbour keeps streaming slowly, stops and starts again: this prefill stays at full speed.
    gaps(b, 30, 12);
    b.set('idle');
    b.set('decoding');
    gaps(b, 30, 12);
    expect(a.sent).toHaveLength(2);
    // The budget spent in two paced stretches adds up to the same ceiling.
    a.set('idle', 0);
    a.set('prefilling', 30_000);
    gaps(b, 30);
    expect(a.sent.at(-1)!.pauseMs).toBeGreaterThan(0);
    now += untilCeiling / 2;
    b.set('idle');
    b.set('decoding');
    gaps(b, 30);
    expect(a.sent.at(-1)!.pauseMs).toBeGreaterThan(0);
    now += untilCeiling / 2 - 1;
    vi.advanceTimersByTime(untilCeiling / 2 - 2);
    expect(a.sent.at(-1)!.pauseMs).toBeGreaterThan(0);
    now += 2;
    vi.advanceTimersByTime(5);
    expect(a.sent.at(-1)).toEqual(FULL_SPEED_PACING);
    expect(last('pacing_released')).toMatchObject({ kind: 'pacing_released', data: { reason: 'ceiling' } });
  });

  it('leaves a runner of protocol 1 alone, and paces nobody with the policy off', () => {
    const old = new ScriptedRunner('old', 'Old', 1);
    const b = new ScriptedRunner('b', 'B');
    controllerOf(old, b);
    old.set('prefilling', 30_000);
    b.set('decoding');
    gaps(b, 40, 12);
    expect(old.sent).toEqual([]);
    old.set('decoding', 0);
    expect(events).toEqual([]);

    policy = 'off';
    const a = new ScriptedRunner('a', 'A');
    const c = new ScriptedRunner('c', 'C');
    controllerOf(a, c);
    a.set('prefilling', 30_000);
    c.set('decoding');
    gaps(c, 40, 12);
    expect(a.sent).toEqual([]);
    // Turned on while A prefills beside a slowed stream: paced once its live ITL is measured; off again: released.
    policy = 'decode_first';
    gaps(c, 40, 6);
    expect(a.sent).toHaveLength(1);
    policy = 'off';
    a.set('prefilling');
    expect(a.sent.at(-1)).toEqual(FULL_SPEED_PACING);
    expect(last('pacing_released')).toMatchObject({ kind: 'pacing_released', data: { reason: 'policy_off' } });
  });
});

describe('the pacing plan', () => {
  it('cuts chunks to about chunkMs of work and pauses for about one neighbour decode step, within the protocol limits', () => {
    expect(pacedPacing(RATES, 12, { ...DEFAULT_PACING_TUNING, chunkMs: 64 })).toEqual({ chunkTokens: 256, pauseMs: 18 });
    // A very fast prefill: never more than the runner's own chunk; a very slow one: never below 64 tokens.
    expect(pacedPacing({ ...RATES, prefillStepMs: (t) => t * 0.001 }, 12).chunkTokens).toBe(4096);
    expect(pacedPacing({ ...RATES, prefillStepMs: (t) => t * 50 }, 12).chunkTokens).toBe(64);
    expect(pacedPacing(RATES, 10_000).pauseMs).toBe(60);
  });
});
