/**
 * `metrics_scrape_ms`: one scrape of `GET /metrics`, over HTTP with the bearer token,
 * through the real metrics code (ExobarMetrics and its route on the real API server),
 * with 16 instances in the snapshot and 10,000 ended requests observed. The node is a
 * fake (hand-made snapshot): 16 runners and 10,000 served requests would take minutes
 * and measure the sim, not the scrape.
 */
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { createApiServer } from '../electron/core/api/api-server';
import { ExobarMetrics } from '../electron/core/metrics/exobar-metrics';
import { metricsRoutes } from '../electron/core/metrics/metrics-route';
import { FakeNode } from '../test/support/fake-node';
import { instance, request as queued, snapshot } from '../test/support/electron/snapshot-fixtures';
import { fakeRequestRecords } from './fake-request-records';
import { quantile } from './api-overhead';

export const SCRAPE_INSTANCES = 16;
export const SCRAPE_REQUESTS = 10_000;

export interface MetricsScrapeResult {
  metrics_scrape_ms: number;
  metrics_scrape: { instances: number; observed_requests: number; scrapes: number; p95_ms: number; bytes: number; series: number };
}

const round = (x: number) => Math.round(x * 1000) / 1000;

function get(url: string, token: string, agent: Agent): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers: { Authorization: `Bearer ${token}` } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (t: string) => (body += t));
      res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`HTTP ${res.statusCode}: ${body}`))));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Median of `scrapes` scrapes (after two warm-ups). */
export async function measureMetricsScrape(scrapes = 20, progress: (line: string) => void = () => undefined): Promise<MetricsScrapeResult> {
  const instances = Array.from({ length: SCRAPE_INSTANCES }, (_, n) =>
    instance(`inst-${n}`, { model: `sim/model-${n}`, queue: { capacity: 64, requests: [queued(`q-${n}-a`, 'decoding'), queued(`q-${n}-b`, 'queued')] } }),
  );
  const state = snapshot({ instances });
  const metrics = new ExobarMetrics({ snapshot: () => state, mac: 'local' });
  // Each request's inter-token gaps too, so every instance has its ITL histogram series.
  for (const record of fakeRequestRecords(SCRAPE_REQUESTS, SCRAPE_INSTANCES)) {
    metrics.observeRequest(
      record,
      Array.from({ length: Math.max(0, record.outputTokens - 1) }, (_, i) => 5 + (i % 7) * 5),
    );
  }
  const node = new FakeNode();
  const token = 'bench-token';
  const server = createApiServer({
    node,
    token,
    rendererDir: null,
    port: 0,
    logger: pino({ level: 'warn' }, pino.destination(2)),
    extraRoutes: metricsRoutes({ metrics, token, tokenFile: null, bindHost: '127.0.0.1', isPublic: () => false }),
  });
  const { url } = await server.listen();
  const agent = new Agent({ keepAlive: true });
  try {
    let text = '';
    for (let i = 0; i < 2; i++) text = await get(`${url}/metrics`, token, agent);
    const times: number[] = [];
    for (let i = 0; i < scrapes; i++) {
      const started = performance.now();
      text = await get(`${url}/metrics`, token, agent);
      times.push(performance.now() - started);
    }
    const series = text.split('\n').filter((line) => line !== '' && !line.startsWith('#')).length;
    const result: MetricsScrapeResult = {
      metrics_scrape_ms: round(quantile(times, 0.5)),
      metrics_scrape: {
        instances: SCRAPE_INSTANCES,
        observed_requests: SCRAPE_REQUESTS,
        scrapes,
        p95_ms: round(quantile(times, 0.95)),
        bytes: Buffer.byteLength(text),
        series,
      },
    };
    progress(`metrics scrape: median ${result.metrics_scrape_ms} ms (${series} series, ${result.metrics_scrape.bytes} bytes)`);
    return result;
  } finally {
    agent.destroy();
    await server.close();
  }
}
