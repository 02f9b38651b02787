import { describe, expect, it } from 'vitest';
import type { NodeEvent } from '../node/node-event';
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
});
