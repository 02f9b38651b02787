/**
 * A finished request's record (shared/request-record.ts) for tests that feed the history,
 * the request log or the page: a done local chat request with every TTFT part filled in,
 * its prefill the whole TTFT. Tests give what they vary; a failed outcome gets the
 * runner-crashed code, as the node records one.
 */
import type { RequestRecord } from '../../shared/request-record';

export function requestRecord(fields: Partial<RequestRecord> & Pick<RequestRecord, 'model' | 'endedAt'> & { ttftMs: number }): RequestRecord {
  const outcome = fields.outcome ?? 'done';
  return {
    id: `r-${fields.model}-${fields.endedAt}-${fields.ttftMs}`,
    at: fields.endedAt - fields.ttftMs - 500,
    instance: `${fields.model}-1`,
    source: 'local',
    node: 'mac',
    client: null,
    api: 'openai-chat',
    promptTokens: 10,
    cachedTokens: null,
    outputTokens: 5,
    loadMs: null,
    waitMs: 0,
    runnerWaitMs: 0,
    prefillMs: fields.ttftMs,
    firstTokenMs: 0,
    prefillTokensPerSecond: null,
    decodeTokensPerSecond: 40,
    itlP95Ms: 30,
    cancelledBy: null,
    errorCode: outcome === 'failed' ? 'runner_crashed' : null,
    ...fields,
    outcome,
  };
}
