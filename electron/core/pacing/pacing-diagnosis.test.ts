import { describe, expect, it } from 'vitest';
import type { NodeEvent } from '../events/node-event';
import { pacingDecisions } from './pacing-diagnosis';

describe('pacing decisions in words', () => {
  it('says whose prefill was paced, beside whose stream, and what it cost', () => {
    const events: NodeEvent[] = [
      { t: 1, kind: 'pacing_engaged', instanceId: 'i-3b', data: { model: 'Llama 3.2 3B', neighbours: ['Llama 3.2 1B'], chunkTokens: 256, pauseMs: 18 } },
      {
        t: 9,
        kind: 'pacing_released',
        instanceId: 'i-3b',
        data: { model: 'Llama 3.2 3B', neighbours: ['Llama 3.2 1B'], reason: 'neighbour_stopped', pacedMs: 4000, addedMs: 600, addedPct: 12.2 },
      },
      {
        t: 20,
        kind: 'pacing_released',
        instanceId: 'i-3b',
        data: { model: 'Llama 3.2 3B', neighbours: ['Llama 3.2 1B', 'Qwen 7B'], reason: 'ceiling', pacedMs: 9000, addedMs: 1500, addedPct: 15 },
      },
    ];
    expect(pacingDecisions(events).map((d) => d.words)).toEqual([
      "paced Llama 3.2 3B's prefill while Llama 3.2 1B streamed: +12 % prefill time (until the stream ended)",
      "paced Llama 3.2 3B's prefill while Llama 3.2 1B and Qwen 7B streamed: +15 % prefill time (until its ceiling on added prefill time, then at full speed)",
    ]);
  });

  it("names the figure that decided: the stream's live ITL over its solo ITL, when paced, recovered and not paced", () => {
    const trigger = { neighbour: 'Llama 3.2 1B', itlMs: 21.6, soloItlMs: 12, ratio: 1.8 };
    const events: NodeEvent[] = [
      {
        t: 1,
        kind: 'pacing_engaged',
        instanceId: 'i-3b',
        data: { model: 'Llama 3.2 3B', neighbours: ['Llama 3.2 1B'], chunkTokens: 256, pauseMs: 18, trigger },
      },
      {
        t: 9,
        kind: 'pacing_released',
        instanceId: 'i-3b',
        data: {
          model: 'Llama 3.2 3B',
          neighbours: ['Llama 3.2 1B'],
          reason: 'neighbour_recovered',
          pacedMs: 4000,
          addedMs: 480,
          addedPct: 8,
          itl: { ...trigger, itlMs: 12.2, ratio: 1.017 },
        },
      },
      {
        t: 30,
        kind: 'pacing_not_needed',
        instanceId: 'i-3b',
        data: { model: 'Llama 3.2 3B', neighbours: ['Llama 3.2 1B'], peak: { ...trigger, itlMs: 12.4, ratio: 1.033 }, engageItlRatio: 1.2 },
      },
      { t: 40, kind: 'pacing_not_needed', instanceId: 'i-3b', data: { model: 'Llama 3.2 3B', neighbours: ['Llama 3.2 1B'], peak: null, engageItlRatio: 1.2 } },
    ];
    const decisions = pacingDecisions(events);
    expect(decisions.map((d) => d.words)).toEqual([
      "paced Llama 3.2 3B's prefill while Llama 3.2 1B streamed (Llama 3.2 1B's ITL 21.6 ms, 1.80× its solo 12 ms): +8 % prefill time (until Llama 3.2 1B's ITL was back at 1.02× its solo)",
      "did not pace Llama 3.2 3B's prefill while Llama 3.2 1B streamed: Llama 3.2 1B's ITL 12.4 ms, 1.03× its solo 12 ms (pacing starts at 1.20×)",
      "did not pace Llama 3.2 3B's prefill while Llama 3.2 1B streamed: Llama 3.2 1B's solo ITL was not known yet, so interference could not be told",
    ]);
    expect(decisions.map((d) => [d.decision, d.itl?.ratio ?? null])).toEqual([
      ['paced', 1.8],
      ['not_paced', 1.033],
      ['not_paced', null],
    ]);
  });
});
