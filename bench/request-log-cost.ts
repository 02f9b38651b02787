/**
 * The request log's cost on `api_overhead_ms_median`: the same measurement as
 * api-overhead.ts (client TTFT minus the node's own TTFT, short sequential streamed
 * requests) on two cores in one run, one with the request log on (and already full:
 * 10,000 rows, so every append also pays for the trimming) and one with it off,
 * requests alternating between them so load on the machine hits both alike. The log
 * writes at a request's end, so the whole request's time is given beside it.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { startCore, type RunningCore } from '../electron/core/start-core';
import { REQUEST_LOG_CAPACITY } from '../electron/core/request-log/request-log';
import { launch, nodeTtftMs, OVERHEAD_MODEL, quantile, streamOnce } from './api-overhead';
import { fakeRequestRecords } from './fake-request-records';

export interface RequestLogCostResult {
  api_overhead_ms_median_request_log_on: number;
  api_overhead_ms_median_request_log_off: number;
  request_log_cost: {
    requests_per_side: number;
    prefilled_rows: number;
    /** Median wall time of a whole request (1 token), log on / off. */
    request_ms_median_on: number;
    request_ms_median_off: number;
    /** Requests the log on side holds at the end: the 10,000 prefilled and this run's (trimmed to 10,000 past 15,000). */
    logged_at_end: number;
  };
}

const round = (x: number) => Math.round(x * 1000) / 1000;

async function core(logRequests: boolean, timeScale: number): Promise<{ core: RunningCore; dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), `exobar-bench-log-${logRequests ? 'on' : 'off'}-`));
  if (logRequests) {
    mkdirSync(join(dataDir, 'request-log'), { recursive: true });
    const rows = fakeRequestRecords(REQUEST_LOG_CAPACITY, 16).map((r) => `${JSON.stringify(r)}\n`);
    writeFileSync(join(dataDir, 'request-log', 'requests.jsonl'), rows.join(''));
  }
  const started = await startCore({
    dataDir,
    port: 0,
    simTimeScale: timeScale,
    rendererDir: null,
    logRequests,
    logger: pino({ level: 'warn' }, pino.destination(2)),
  });
  await launch(started, OVERHEAD_MODEL);
  return { core: started, dataDir };
}

export async function measureRequestLogCost(
  timeScale: number,
  requests = 60,
  progress: (line: string) => void = () => undefined,
): Promise<RequestLogCostResult> {
  const on = await core(true, timeScale);
  const off = await core(false, timeScale);
  try {
    const sides = [
      { side: on, overhead: [] as number[], whole: [] as number[] },
      { side: off, overhead: [] as number[], whole: [] as number[] },
    ];
    for (const s of sides) for (let i = 0; i < 5; i++) await streamOnce(s.side.core.url, OVERHEAD_MODEL, `warm up ${i}`, 1);
    for (let i = 0; i < requests; i++) {
      // Alternate which side goes first, so neither always follows the other.
      for (const s of i % 2 === 0 ? sides : [...sides].reverse()) {
        const started = performance.now();
        const result = await streamOnce(s.side.core.url, OVERHEAD_MODEL, `overhead probe ${i}`, 1);
        s.whole.push(performance.now() - started);
        s.overhead.push(result.ttftMs - nodeTtftMs(s.side.core, result.id));
      }
    }
    const [a, b] = sides as [(typeof sides)[0], (typeof sides)[0]];
    const result: RequestLogCostResult = {
      api_overhead_ms_median_request_log_on: round(quantile(a.overhead, 0.5)),
      api_overhead_ms_median_request_log_off: round(quantile(b.overhead, 0.5)),
      request_log_cost: {
        requests_per_side: requests,
        prefilled_rows: REQUEST_LOG_CAPACITY,
        request_ms_median_on: round(quantile(a.whole, 0.5)),
        request_ms_median_off: round(quantile(b.whole, 0.5)),
        logged_at_end: on.core.requestLog.query({ limit: 1 }).total,
      },
    };
    progress(
      `request log: api overhead median ${result.api_overhead_ms_median_request_log_on} ms on / ${result.api_overhead_ms_median_request_log_off} ms off; whole request ${result.request_log_cost.request_ms_median_on} / ${result.request_log_cost.request_ms_median_off} ms`,
    );
    return result;
  } finally {
    for (const s of [on, off]) {
      await s.core.stop();
      rmSync(s.dataDir, { recursive: true, force: true });
    }
  }
}
