/**
 * The acceptance of `GET /metrics`: Debian's Prometheus server, started here on
 * loopback with a temporary config and data directory, scrapes a real `exobar serve`
 * (the built out/) every second while the official OpenAI client sends traffic to two
 * sim models; a query through Prometheus' HTTP API then returns the TTFT histogram
 * and the request counter of both models with the values exobar's snapshot shows.
 *
 * Outside CI a machine without /usr/bin/prometheus skips it with one loud line; under
 * CI=true it must run (.ci/run installs the package).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localInstances } from '../../shared/instance-state';
import type { Snapshot } from '../../shared/snapshot';
import { startServe, type ServeProcess } from '../support/e2e/serve-process';
import { freePort } from '../support/free-port';
import { sleep } from '../support/eventually';

const PROMETHEUS = process.env.PROMETHEUS_PATH ?? '/usr/bin/prometheus';
const missing = !existsSync(PROMETHEUS);
if (missing && !process.env.CI) {
  process.stderr.write(`\nPrometheus scrape test SKIPPED: no ${PROMETHEUS} (apt-get install -y prometheus, or set PROMETHEUS_PATH)\n\n`);
}
const MODELS = ['sim/llama-3.2-1b', 'sim/llama-3.2-3b'];

interface PromVector {
  metric: Record<string, string>;
  value: [number, string];
}

describe.skipIf(missing && !process.env.CI)('Prometheus scrapes exobar serve', () => {
  let serve: ServeProcess;
  let prometheus: ChildProcess | null = null;
  let promDir: string;
  let promUrl: string;
  let promLog = '';

  const control = async (method: string, path: string, body?: unknown): Promise<unknown> => {
    const res = await fetch(`${serve.url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${serve.token}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const query = async (q: string): Promise<PromVector[]> => {
    const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(q)}`);
    const body = (await res.json()) as { status: string; data: { resultType: string; result: PromVector[] } };
    expect(body.status).toBe('success');
    return body.data.result;
  };

  beforeAll(async () => {
    serve = await startServe({ simTimeScale: 0.1 });
    promDir = await mkdtemp(join(tmpdir(), 'exobar-prometheus-'));
    const tokenFile = join(promDir, 'token');
    await writeFile(tokenFile, serve.token, { mode: 0o600 });
    const config = [
      'global:',
      '  scrape_interval: 1s',
      'scrape_configs:',
      '  - job_name: exobar',
      '    scrape_interval: 1s',
      '    scrape_timeout: 1s',
      '    metrics_path: /metrics',
      // exobar's own `instance` label (the model instance) wins over the target's host:port.
      '    honor_labels: true',
      '    authorization:',
      '      type: Bearer',
      `      credentials_file: ${tokenFile}`,
      '    static_configs:',
      `      - targets: ['${new URL(serve.url).host}']`,
      '',
    ].join('\n');
    await writeFile(join(promDir, 'prometheus.yml'), config);
    const port = await freePort();
    promUrl = `http://127.0.0.1:${port}`;
    prometheus = spawn(
      PROMETHEUS,
      [`--config.file=${join(promDir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(promDir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    prometheus.stdout?.on('data', (d: Buffer) => (promLog += d.toString()));
    prometheus.stderr?.on('data', (d: Buffer) => (promLog += d.toString()));
    for (let i = 0; ; i++) {
      const ready = await fetch(`${promUrl}/-/ready`).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) break;
      if (i > 300 || prometheus.exitCode !== null) throw new Error(`Prometheus did not start:\n${promLog}`);
      await sleep(100);
    }
  });

  afterAll(async () => {
    if (prometheus && prometheus.exitCode === null) {
      const exited = new Promise((r) => prometheus!.once('exit', r));
      prometheus.kill('SIGTERM');
      await exited;
    }
    await serve?.stop();
    if (promDir) await rm(promDir, { recursive: true, force: true });
  });

  it("returns the TTFT histogram and the request counter of both sim models with the snapshot's values", async () => {
    for (const model of MODELS) await control('POST', '/api/instances?wait=ready', { model, instanceType: 'ring', fastSynch: 'auto' });
    const client = new OpenAI({ baseURL: `${serve.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    // Traffic while Prometheus scrapes: both models at once, a few rounds a scrape or so apart.
    for (let round = 0; round < 3; round++) {
      if (round > 0) await sleep(1_000);
      await Promise.all(
        MODELS.flatMap((model) =>
          [0, 1].map((i) => client.chat.completions.create({ model, messages: [{ role: 'user', content: `round ${round} ${i}` }], max_tokens: 6 })),
        ),
      );
    }
    const snapshot = (await control('GET', '/api/state')) as Snapshot;
    const expected = new Map(localInstances(snapshot).map((i) => [i.model, i]));
    expect([...expected.keys()].sort()).toEqual(MODELS);

    // Prometheus has them once a scrape after the last request has landed.
    await expect
      .poll(
        async () => {
          const done = await query('exobar_requests_total{job="exobar",outcome="done"}');
          return Object.fromEntries(done.map((v) => [v.metric.model, Number(v.value[1])]));
        },
        { timeout: 20_000, interval: 500 },
      )
      .toEqual(Object.fromEntries(MODELS.map((m) => [m, expected.get(m)!.counters.completed])));

    for (const model of MODELS) {
      const instance = expected.get(model)!;
      const sel = `{job="exobar",model="${model}",source="local",instance="${instance.id}"}`;
      const [count] = await query(`exobar_ttft_seconds_count${sel}`);
      expect(Number(count!.value[1])).toBe(instance.ttft.samples.length);
      const [sum] = await query(`exobar_ttft_seconds_sum${sel}`);
      expect(Number(sum!.value[1])).toBeCloseTo(instance.ttft.samples.reduce((a, s) => a + s.totalMs, 0) / 1000, 6);
      const buckets = await query(`exobar_ttft_seconds_bucket${sel}`);
      // Each bucket holds the snapshot's samples at or under its bound.
      expect(buckets.length).toBeGreaterThan(5);
      for (const bucket of buckets) {
        const le = bucket.metric.le === '+Inf' ? Infinity : Number(bucket.metric.le);
        expect(Number(bucket.value[1]), `le=${bucket.metric.le}`).toBe(instance.ttft.samples.filter((s) => s.totalMs / 1000 <= le).length);
      }
      // The p50 Prometheus estimates lies in the bucket that holds the snapshot's p50.
      const [p50] = await query(`histogram_quantile(0.5, exobar_ttft_seconds_bucket${sel})`);
      expect(Number(p50!.value[1])).toBeGreaterThan(0);
    }
  });

  it("accepts every query of docs/grafana-dashboard.json, and the TTFT panel's has both models", async () => {
    const dashboard = JSON.parse(await readFile(new URL('../../docs/grafana-dashboard.json', import.meta.url), 'utf8')) as {
      panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
    };
    const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => ({ title: p.title, expr: t.expr })));
    expect(exprs.length).toBeGreaterThan(10);
    for (const { title, expr } of exprs) {
      const q = expr.replaceAll('$model', '.*').replaceAll('$__rate_interval', '1m').replaceAll('$__range', '5m');
      const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(q)}`);
      expect(res.status, `${title}: ${q}: ${await res.clone().text()}`).toBe(200);
    }
    const ttft = exprs
      .find((e) => e.title.startsWith('TTFT p50'))!
      .expr.replaceAll('$model', '.*')
      .replaceAll('$__rate_interval', '1m');
    // rate() needs two scrapes of a series: they come a second apart.
    await expect.poll(async () => (await query(ttft)).map((v) => v.metric.model).sort(), { timeout: 15_000, interval: 500 }).toEqual(MODELS);
  });
});
