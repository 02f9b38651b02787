import { describe, expect, it } from 'vitest';
import { createTokenSource, NATURAL_LENGTH_MAX, NATURAL_LENGTH_MIN, planCompletion } from './token-stream';

const take = (next: () => { text: string; tokenId: number }, n: number) => Array.from({ length: n }, () => next());

describe('token stream', () => {
  it('is deterministic per commandId, and the seed wins over the commandId', () => {
    const a = take(createTokenSource({ seed: null }, 'chatcmpl-1'), 20);
    expect(take(createTokenSource({ seed: null }, 'chatcmpl-1'), 20)).toEqual(a);
    expect(take(createTokenSource({ seed: null }, 'chatcmpl-2'), 20)).not.toEqual(a);
    const seeded = take(createTokenSource({ seed: 7 }, 'chatcmpl-1'), 20);
    expect(take(createTokenSource({ seed: 7 }, 'chatcmpl-other'), 20)).toEqual(seeded);
  });

  it('makes words with a leading space after the first, and integer ids', () => {
    const tokens = take(createTokenSource({ seed: 1 }, 'x'), 5);
    expect(tokens[0]!.text).toMatch(/^\S+$/);
    for (const t of tokens.slice(1)) expect(t.text).toMatch(/^ \S+$/);
    for (const t of tokens) expect(Number.isInteger(t.tokenId)).toBe(true);
  });

  it("plans exactly maxTokens ('length') or a natural length in [16, 48] ('stop')", () => {
    expect(planCompletion({ seed: null, maxTokens: 5 }, 'a')).toEqual({ length: 5, finishReason: 'length' });
    const lengths = new Set<number>();
    for (let i = 0; i < 300; i++) {
      const plan = planCompletion({ seed: null, maxTokens: null }, `cmd-${i}`);
      expect(plan.finishReason).toBe('stop');
      expect(plan.length).toBeGreaterThanOrEqual(NATURAL_LENGTH_MIN);
      expect(plan.length).toBeLessThanOrEqual(NATURAL_LENGTH_MAX);
      lengths.add(plan.length);
    }
    expect(lengths.size).toBeGreaterThan(20);
    expect(planCompletion({ seed: null, maxTokens: null }, 'same')).toEqual(planCompletion({ seed: null, maxTokens: null }, 'same'));
  });
});
