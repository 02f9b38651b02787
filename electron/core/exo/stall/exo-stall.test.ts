/**
 * The measured stall, at a tenth of real time, through exobar to the serving fake exo
 * (real HTTP, the openai client's wire format): the 3B prefills ~30k tokens, one more
 * 3B request is queued, a short 1B request follows. Against exo's blocking worker the
 * hold removes the stall for traffic through exobar; with the hold off, or with the
 * queued request bypassing exobar, the stall happens and `exo_dispatch_stall` names it.
 * Against the fixed worker nothing stalls and nothing is raised.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { makePrompt } from '../../../../shared/token-count';
import type { Warning } from '../../../../shared/snapshot';
import { LLAMA_1B, LLAMA_3B, firstTokenMs, readTimedLines } from '../../../../test/support/fake-exo';
import { startProxyRig, type ProxyRig } from '../../../../test/support/exo-proxy-rig';
import { exoStallWarnings } from './exo-stall-warnings';
import { eventually, sleep } from '../../../../test/support/eventually';

let p: ProxyRig | null = null;
afterEach(async () => {
  await p?.close();
  p = null;
});

const post = (base: string, model: string, tokens: number, salt: string) =>
  fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: makePrompt(tokens, salt), max_tokens: 4, stream: true }),
  });

interface Outcome {
  ttftMs: number;
  warnings: Warning[];
  sawHeld: boolean;
}

/** Runs the scenario; `queuedVia: "exo"` sends the queued 3B request straight to exo. */
async function scenario(rig: ProxyRig, queuedVia: 'exobar' | 'exo'): Promise<Outcome> {
  const warnings: Warning[] = [];
  let sawHeld = false;
  const watch = setInterval(() => {
    sawHeld ||= rig.serving.traffic.active().some((r) => r.phase === 'held');
    warnings.push(
      ...exoStallWarnings({ traffic: rig.serving.traffic, reading: rig.client.reading, holdEnabled: rig.hold.enabled, thresholds: { dispatchStallMs: 300 } }),
    );
  }, 25);
  try {
    const long = post(rig.rig.url, LLAMA_3B, 30_000, `long${Math.random()}`).then(readTimedLines);
    await eventually(() => rig.serving.traffic.active().some((r) => r.model === LLAMA_3B && r.phase === 'prefilling'), 5000, 'the long prefill');
    const queued = post(queuedVia === 'exo' ? rig.exo.url : rig.rig.url, LLAMA_3B, 50, `q${Math.random()}`).then(readTimedLines);
    await sleep(350);
    const start = performance.now();
    const short = await readTimedLines(await post(rig.rig.url, LLAMA_1B, 30, `s${Math.random()}`));
    await Promise.all([long, queued]);
    return { ttftMs: firstTokenMs(short, start)!, warnings, sawHeld };
  } finally {
    clearInterval(watch);
  }
}

const stalls = (warnings: Warning[]) => warnings.filter((w) => w.code === 'exo_dispatch_stall');

describe('against the blocking fake exo', () => {
  it('the hold keeps the short request from stalling: the queued 3B request waits in exobar, nothing is raised', async () => {
    p = await startProxyRig({ mode: 'blocking' });
    const outcome = await scenario(p, 'exobar');
    expect(outcome.sawHeld).toBe(true);
    expect(outcome.ttftMs).toBeLessThan(600);
    expect(stalls(outcome.warnings)).toEqual([]);
  });

  it('with the hold off the short request stalls behind the prefill, and exo_dispatch_stall names both models', async () => {
    p = await startProxyRig({ mode: 'blocking' });
    p.hold.enabled = false;
    const outcome = await scenario(p, 'exobar');
    expect(outcome.ttftMs).toBeGreaterThan(1_000);
    const [warning] = stalls(outcome.warnings);
    expect(warning!.title).toContain(LLAMA_1B);
    expect(warning!.title).toContain(LLAMA_3B);
    expect(warning!.title).toContain('studio-a');
    expect(warning!.risk).toContain('hold is off');
    expect(warning!.fix).toContain('exo PR 2348');
    expect(warning!.fix).toContain('do not queue requests behind long prompts on a shared Mac');
  });

  it('a queued request that bypasses exobar still stalls exo; the warning says exo holds a task exobar did not send', async () => {
    p = await startProxyRig({ mode: 'blocking' });
    const outcome = await scenario(p, 'exo');
    expect(outcome.ttftMs).toBeGreaterThan(1_000);
    const [warning] = stalls(outcome.warnings);
    expect(warning!.risk).toContain(`exo holds 1 task for ${LLAMA_3B} that exobar did not send`);
  });

  it('a held request is cancelled at once by /v1/cancel with its exobar id', async () => {
    p = await startProxyRig({ mode: 'blocking' });
    const long = post(p.rig.url, LLAMA_3B, 30_000, 'long-c').then(readTimedLines);
    const rig = p;
    await eventually(() => rig.serving.traffic.active().some((r) => r.phase === 'prefilling'), 5000, 'the long prefill');
    const queued = post(p.rig.url, LLAMA_3B, 50, 'queued-c').then(readTimedLines);
    const held = await eventually(() => rig.serving.traffic.active().find((r) => r.phase === 'held'), 5000, 'a held request');
    // In the snapshot's shapes: the held request queued under its exo instance, the long one prefilling.
    const instanceId = [...rig.client.reading.instances!.values()].find((i) => i.modelId === LLAMA_3B)!.instanceId;
    const view = await eventually(
      () => {
        const v = rig.serving.traffic.instanceView(instanceId);
        return (v.prefill?.processedTokens ?? 0) > 0 ? v : null;
      },
      5000,
      'a prefill chunk',
    );
    expect(view.requests.map((r) => r.phase).sort()).toEqual(['prefilling', 'queued']);
    expect(view.prefill).toMatchObject({ totalTokens: 29_999 });
    expect(view.prefill!.etaMs).toBeGreaterThan(0);
    const answer = await fetch(`${p.rig.url}/v1/cancel/${held.id}`, { method: 'POST' });
    expect(await answer.json()).toMatchObject({ cancelled: true, held_by_exobar: true });
    const ending = (await queued).map((l) => l.line);
    expect(ending).toHaveLength(2);
    expect(JSON.parse(ending[0]!.slice(6))).toMatchObject({ id: held.id, choices: [{ finish_reason: 'cancelled' }] });
    expect(ending[1]).toBe('data: [DONE]');
    expect(p.serving.traffic.find(held.id)).toMatchObject({ phase: 'cancelled' });
    await long;
  });
});

describe('against the fixed fake exo (exo PR 2348)', () => {
  it('nothing stalls and nothing is raised, even with the hold off and a request bypassing exobar', async () => {
    p = await startProxyRig({ mode: 'fixed' });
    p.hold.enabled = false;
    const outcome = await scenario(p, 'exo');
    expect(outcome.ttftMs).toBeLessThan(600);
    expect(stalls(outcome.warnings)).toEqual([]);
  });
});
