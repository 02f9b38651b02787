import { describe, expect, it } from 'vitest';
import { countPromptTokens, promptTokens } from '../../../shared/token-count';
import { SimPromptCache } from './prompt-cache';

const chat = (...turns: string[]) => turns.map((content, i) => ({ role: i % 2 === 0 ? ('user' as const) : ('assistant' as const), content }));

describe('the sim prompt cache', () => {
  it('sees a chat as countPromptTokens tokens, each turn a prefix of the next', () => {
    const one = promptTokens(chat('w1 w2 w3'));
    const two = promptTokens(chat('w1 w2 w3', 'w4 w5', 'w6'));
    expect(one.length).toBe(countPromptTokens(chat('w1 w2 w3')));
    expect(two.length).toBe(countPromptTokens(chat('w1 w2 w3', 'w4 w5', 'w6')));
    expect(two.slice(0, one.length)).toEqual(one);
  });

  it('serves a stored prefix, never the last token, and counts hits and misses', () => {
    const cache = new SimPromptCache(1_000_000, 100);
    const one = promptTokens(chat('w1 w2 w3'));
    expect(cache.lookup(one)).toBe(0);
    cache.store(one);
    expect(cache.lookup(promptTokens(chat('w1 w2 w3', 'w4', 'w5')))).toBe(one.length);
    // The same prompt again: all but its last token.
    expect(cache.lookup(one)).toBe(one.length - 1);
    // A prompt that only shares a header with a stored one misses.
    expect(cache.lookup(promptTokens(chat('w9 w2 w3')))).toBe(0);
    expect(cache.stats()).toMatchObject({ entries: 1, bytes: one.length * 100, hits: 2, misses: 2, hitTokens: 2 * one.length - 1 });
  });

  it('evicts the least recently used prompt when over its byte cap, and keeps nothing at cap 0', () => {
    const a = promptTokens(chat('w1 w2'));
    const b = promptTokens(chat('w3 w4'));
    const c = promptTokens(chat('w5 w6'));
    const cache = new SimPromptCache(2 * a.length * 10, 10);
    cache.store(a);
    cache.store(b);
    expect(cache.lookup(a)).toBeGreaterThan(0); // a is now the most recently used
    cache.store(c);
    expect(cache.lookup(b)).toBe(0);
    expect(cache.lookup(a)).toBeGreaterThan(0);
    expect(cache.lookup(c)).toBeGreaterThan(0);
    const off = new SimPromptCache(0, 10);
    off.store(a);
    expect(off.lookup(a)).toBe(0);
    expect(off.stats()).toMatchObject({ entries: 0, hits: 0, misses: 0 });
  });
});
