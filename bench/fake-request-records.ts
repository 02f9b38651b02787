/**
 * Ended-request records as the request feed makes them, for the benchmarks that need a
 * full request log or many observed requests without serving 10,000 requests first.
 */
import type { RequestRecord } from '../shared/request-record';

/** `count` records spread over `instances` (ids `inst-<n>`, models `sim/model-<n>`), mostly done, some cancelled or failed. */
export function fakeRequestRecords(count: number, instances: number, startAt = Date.now() - count * 1000): RequestRecord[] {
  return Array.from({ length: count }, (_, i): RequestRecord => {
    const n = i % instances;
    const outcome = i % 50 === 0 ? 'failed' : i % 20 === 0 ? 'cancelled' : 'done';
    const ttftMs = 40 + (i % 97) * 3;
    return {
      id: `chatcmpl-bench-${i}`,
      at: startAt + i * 1000,
      endedAt: startAt + i * 1000 + 900,
      model: `sim/model-${n}`,
      instance: `inst-${n}`,
      source: n % 4 === 3 ? 'exo' : 'local',
      node: n % 4 === 3 ? 'mac-studio-2' : 'local',
      client: 'OpenAI/JS 4.0',
      api: 'openai-chat',
      promptTokens: 20 + (i % 300),
      cachedTokens: null,
      outputTokens: outcome === 'failed' ? 0 : 32,
      ttftMs: outcome === 'failed' ? null : ttftMs,
      loadMs: null,
      waitMs: outcome === 'failed' ? null : 5,
      runnerWaitMs: outcome === 'failed' ? null : 0,
      prefillMs: outcome === 'failed' ? null : ttftMs - 25,
      firstTokenMs: outcome === 'failed' ? null : 20,
      prefillTokensPerSecond: outcome === 'failed' ? null : 900 + (i % 400),
      decodeTokensPerSecond: outcome === 'failed' ? null : 80 + (i % 30),
      itlP95Ms: outcome === 'failed' ? null : 12 + (i % 9),
      outcome,
      cancelledBy: outcome === 'cancelled' ? 'client_disconnect' : null,
      errorCode: outcome === 'failed' ? 'runner_crashed' : null,
    };
  });
}
