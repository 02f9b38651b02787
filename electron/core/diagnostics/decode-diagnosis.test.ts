import { describe, expect, it } from 'vitest';
import { evenDecode } from '../../../test/support/decode-fixture';
import type { RequestTimeline } from '../node/node-types';
import { diagnoseDecode } from './decode-diagnosis';

const NEIGHBOUR = { instanceId: 'llama-3.2-3b-2', model: 'sim/llama-3.2-3b', modelName: 'Llama 3.2 3B', phase: 'prefilling' as const, node: null };

function finished(requestId: string, firstTokenAt: number, lastTokenAt: number, tokens: number, beside = false): RequestTimeline {
  return {
    requestId,
    instanceId: 'llama-3.2-1b-1',
    model: 'sim/llama-3.2-1b',
    promptTokens: 20,
    completionTokens: tokens,
    arrivedAt: firstTokenAt - 100,
    dispatchedAt: firstTokenAt - 99,
    acknowledgedAt: firstTokenAt - 98,
    prefillStartAt: firstTokenAt - 98,
    prefillEndAt: firstTokenAt - 10,
    firstTokenAt,
    endedAt: lastTokenAt,
    outcome: 'finished',
    ttft: null,
    ...evenDecode(tokens, firstTokenAt, lastTokenAt, beside ? [NEIGHBOUR] : []),
    concurrentBusyInstances: beside ? [NEIGHBOUR.instanceId] : [],
  };
}

describe('decode diagnosis', () => {
  it('names the neighbour and phase that slowed a decode below its solo rate', () => {
    // Alone: 51 tokens over 500 ms (100 tokens/s); beside the 3B prefill: 51 tokens over 1000 ms.
    const findings = diagnoseDecode([finished('solo', 1000, 1500, 51), finished('slowed', 5000, 6000, 51, true)], 1.3);
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({
      requestId: 'slowed',
      cause: 'decode_slowed_by_neighbour',
      neighbour: { modelName: 'Llama 3.2 3B', phase: 'prefilling' },
      ratio: 0.5,
      soloDecodeTokensPerSecond: 100,
    });
    expect(findings[0]!.explanation).toContain('50 % of its solo rate');
    expect(findings[0]!.explanation).toContain('while Llama 3.2 3B prefills');
  });

  it('finds nothing when the decode beside the neighbour is about as fast as alone, or with no solo reference', () => {
    expect(diagnoseDecode([finished('solo', 1000, 1500, 51), finished('beside', 5000, 5550, 51, true)], 1.3)).toEqual([]);
    expect(diagnoseDecode([finished('beside', 5000, 6000, 51, true)], 1.3)).toEqual([]);
  });
});
