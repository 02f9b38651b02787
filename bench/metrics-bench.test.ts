/**
 * The metrics benchmarks on a small scale: the scrape really carries the 16 instances
 * and the 10,000 observed requests, and the request log's cost measurement logs on one
 * side only.
 */
import { describe, expect, it } from 'vitest';
import { measureMetricsScrape, SCRAPE_INSTANCES } from './metrics-scrape';
import { measureRequestLogCost } from './request-log-cost';

describe('metrics benchmarks', () => {
  it('scrapes /metrics with 16 instances and 10,000 observed requests', async () => {
    const result = await measureMetricsScrape(3);
    expect(Number.isFinite(result.metrics_scrape_ms)).toBe(true);
    expect(result.metrics_scrape.instances).toBe(SCRAPE_INSTANCES);
    // 16 instances' histograms and counters, gauges: well over a thousand series.
    expect(result.metrics_scrape.series).toBeGreaterThan(1000);
  });

  it('measures the API overhead with the request log on and off', async () => {
    const result = await measureRequestLogCost(0.1, 4);
    expect(Number.isFinite(result.api_overhead_ms_median_request_log_on)).toBe(true);
    expect(Number.isFinite(result.api_overhead_ms_median_request_log_off)).toBe(true);
    // The prefilled 10,000, the 5 warm-ups and the 4 probes of the side with the log on.
    expect(result.request_log_cost.logged_at_end).toBe(10_009);
  });
});
