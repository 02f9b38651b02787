import { describe, expect, it } from 'vitest';
import { instanceFixture } from '../support/instance-fixture';
import { requestsEndingOnStop, requestsWillEndWords } from '../../shared/stop-confirmation';

const req = (id: string, phase: 'queued' | 'decoding') => ({
  id,
  phase,
  ageMs: 1,
  promptTokens: 10,
  completionTokens: 0,
  decodeTokensPerSecond: null,
  itlP50Ms: null,
  itlP95Ms: null,
});

describe('requests ending on stop', () => {
  it('counts every request the stopped instances hold, queued ones included, and no other instance\u2019s', () => {
    const a = instanceFixture({ id: 'a', queue: { capacity: 64, requests: [req('1', 'decoding'), req('2', 'queued')] } });
    const b = instanceFixture({ id: 'b', queue: { capacity: 64, requests: [req('3', 'decoding')] } });
    expect(requestsEndingOnStop({ instances: [a, b] }, ['a'])).toBe(2);
    expect(requestsEndingOnStop({ instances: [a, b] }, ['a', 'b'])).toBe(3);
    expect(requestsEndingOnStop({ instances: [a, b] }, ['gone'])).toBe(0);
  });

  it('says it in words', () => {
    expect(requestsWillEndWords(1)).toBe('1 request will end');
    expect(requestsWillEndWords(2)).toBe('2 requests will end');
  });
});
