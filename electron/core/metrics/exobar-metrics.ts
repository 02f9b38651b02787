/**
 * exobar's Prometheus metrics (docs/metrics.md lists them), with prom-client, in a
 * registry of their own per core (never prom-client's global one: two cores in one
 * process, as in the tests, keep separate figures).
 *
 * Nothing here keeps a second account of the node. Per-request histograms and counters
 * are observed from the request records (request-log/request-feed.ts) as each request
 * ends; cancellations and restarts from the node's event log as they are recorded; every
 * gauge, and the counters the snapshot already holds (rejected inputs, exo poll errors),
 * is read from the one snapshot at scrape time.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { INSTANCE_LIFECYCLES, instanceLifecycle } from '../../../shared/instance-state';
import type { RequestRecord } from '../../../shared/request-record';
import type { InstanceSnapshot, Snapshot } from '../../../shared/snapshot';
import type { NodeEvent } from '../node/node-types';

/** Labels of every per-instance series. `node` is the Mac that served it ("local" names this one's host). */
const INSTANCE_LABELS = ['model', 'instance', 'source', 'node'] as const;
type InstanceLabels = Record<(typeof INSTANCE_LABELS)[number], string>;

/** Seconds: from a fast local prefill (tens of ms) to a long prompt behind a queue (minutes). */
const TTFT_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** Seconds between two tokens of one request. */
const ITL_BUCKETS = [0.002, 0.005, 0.01, 0.02, 0.035, 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2.5];
/** Prompt tokens per second of prefill. */
const PREFILL_RATE_BUCKETS = [10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000];

export interface MetricsSources {
  /** The node's snapshot (gauges are read from it at each scrape). */
  snapshot: () => Snapshot;
  /** This Mac's name: the `node` label of local instances. */
  mac: string;
}

export class ExobarMetrics {
  readonly registry = new Registry();
  private readonly ttft: Histogram<string>;
  private readonly ttftWait: Histogram<string>;
  private readonly ttftRunnerWait: Histogram<string>;
  private readonly ttftPrefill: Histogram<string>;
  private readonly ttftFirstToken: Histogram<string>;
  private readonly itl: Histogram<string>;
  private readonly itlGaps: Histogram<string>;
  private readonly prefillRate: Histogram<string>;
  private readonly requests: Counter<string>;
  private readonly generatedTokens: Counter<string>;
  private readonly promptTokens: Counter<string>;
  private readonly cancellations: Counter<string>;
  private readonly restarts: Counter<string>;
  /** The cause of each local instance's last exit, for the restart that follows it. */
  private readonly lastExitCause = new Map<string, string>();

  constructor(private readonly sources: MetricsSources) {
    const registers = [this.registry];
    const histogram = (name: string, help: string, buckets: number[], extra: string[] = []) =>
      new Histogram({ name, help, buckets, labelNames: [...INSTANCE_LABELS, ...extra], registers });
    this.ttft = histogram('exobar_ttft_seconds', 'Time to first token, from arrival at exobar to the first token, by API dialect too.', TTFT_BUCKETS, ['api']);
    this.ttftWait = histogram(
      'exobar_ttft_wait_seconds',
      "TTFT part: arrival until the engine took the request (exobar's queue, the runner's acknowledgement; for exo, until its first prefill progress).",
      TTFT_BUCKETS,
    );
    this.ttftRunnerWait = histogram(
      'exobar_ttft_runner_wait_seconds',
      "TTFT part: waiting in the runner, from its acknowledgement until the runner began the request's prefill (its turn behind the same model's earlier prompts). Local runners only.",
      TTFT_BUCKETS,
    );
    this.ttftPrefill = histogram('exobar_ttft_prefill_seconds', 'TTFT part: the prompt prefill.', TTFT_BUCKETS);
    this.ttftFirstToken = histogram('exobar_ttft_first_token_seconds', 'TTFT part: the end of prefill until the first token.', TTFT_BUCKETS);
    this.itl = histogram(
      'exobar_request_itl_p95_seconds',
      "Inter-token latency (the time between two tokens of one request): each request's 95th percentile, observed at its end.",
      ITL_BUCKETS,
    );
    this.itlGaps = histogram(
      'exobar_itl_seconds',
      'Inter-token latency: every gap between two consecutive tokens of one request, observed when the request ends.',
      ITL_BUCKETS,
    );
    this.prefillRate = histogram('exobar_prefill_tokens_per_second', 'Prefill speed per request: prompt tokens per second of prefill.', PREFILL_RATE_BUCKETS);
    this.requests = new Counter({
      name: 'exobar_requests_total',
      help: 'Requests ended, by API dialect (openai-chat, anthropic-messages, ...), outcome (done, cancelled, failed) and, for failed ones, error code.',
      labelNames: [...INSTANCE_LABELS, 'api', 'outcome', 'code'],
      registers,
    });
    this.generatedTokens = new Counter({ name: 'exobar_generated_tokens_total', help: 'Tokens generated.', labelNames: [...INSTANCE_LABELS], registers });
    this.promptTokens = new Counter({
      name: 'exobar_prompt_tokens_total',
      help: 'Prompt tokens of ended requests.',
      labelNames: [...INSTANCE_LABELS],
      registers,
    });
    this.cancellations = new Counter({
      name: 'exobar_cancellations_total',
      help: 'Cancellations of local requests by step: held (the runner had not acknowledged the task), sent to the runner, confirmed by it.',
      labelNames: [...INSTANCE_LABELS, 'state'],
      registers,
    });
    this.restarts = new Counter({
      name: 'exobar_runner_restarts_total',
      help: 'Local runner restarts scheduled by the supervisor, by the cause of the exit before them (crash, stuck, startup_failed).',
      labelNames: [...INSTANCE_LABELS, 'cause'],
      registers,
    });
    this.snapshotMetrics();
  }

  /** One ended request (from the request feed), with its inter-token gaps in ms where they are known. */
  observeRequest(record: RequestRecord, itlGapsMs: readonly number[] = []): void {
    const labels: InstanceLabels = { model: record.model, instance: record.instance ?? 'unknown', source: record.source, node: record.node ?? 'unknown' };
    this.requests.inc({ ...labels, api: record.api ?? 'unknown', outcome: record.outcome, code: record.errorCode ?? '' });
    if (record.outputTokens > 0) this.generatedTokens.inc(labels, record.outputTokens);
    if (record.promptTokens > 0) this.promptTokens.inc(labels, record.promptTokens);
    if (record.ttftMs != null) this.ttft.observe({ ...labels, api: record.api ?? 'unknown' }, record.ttftMs / 1000);
    if (record.waitMs != null) this.ttftWait.observe(labels, record.waitMs / 1000);
    if (record.runnerWaitMs != null) this.ttftRunnerWait.observe(labels, record.runnerWaitMs / 1000);
    if (record.prefillMs != null) this.ttftPrefill.observe(labels, record.prefillMs / 1000);
    if (record.firstTokenMs != null) this.ttftFirstToken.observe(labels, record.firstTokenMs / 1000);
    if (record.itlP95Ms != null) this.itl.observe(labels, record.itlP95Ms / 1000);
    if (itlGapsMs.length > 0) {
      const series = this.itlGaps.labels(labels);
      for (const gap of itlGapsMs) series.observe(gap / 1000);
    }
    if (record.prefillTokensPerSecond != null) this.prefillRate.observe(labels, record.prefillTokensPerSecond);
  }

  /** One entry of the node's event log (cancellations, restarts). */
  observeEvent(event: NodeEvent): void {
    switch (event.kind) {
      case 'cancel_held':
      case 'cancel_sent':
      case 'cancel_confirmed':
        this.cancellations.inc({ ...this.localLabels(event.instanceId), state: event.kind.slice('cancel_'.length) });
        break;
      case 'runner_exited':
        this.lastExitCause.set(event.instanceId, event.data.cause);
        break;
      case 'runner_restart_scheduled':
        this.restarts.inc({ ...this.localLabels(event.instanceId), cause: this.lastExitCause.get(event.instanceId) ?? 'unknown' });
        break;
      case 'instance_deleted':
        this.lastExitCause.delete(event.instanceId);
        break;
      default:
        break;
    }
  }

  /** The text a scrape gets, and its content type. */
  async scrape(): Promise<{ text: string; contentType: string }> {
    return { text: await this.registry.metrics(), contentType: this.registry.contentType };
  }

  private localLabels(instanceId: string): InstanceLabels {
    const instance = this.sources.snapshot().instances.find((i) => i.id === instanceId);
    return { model: instance?.model ?? 'unknown', instance: instanceId, source: 'local', node: this.sources.mac };
  }

  private labelsOf(instance: InstanceSnapshot): InstanceLabels {
    if (instance.source === 'local') return { model: instance.model, instance: instance.id, source: 'local', node: this.sources.mac };
    const runner = [...instance.exo.runners].sort((a, b) => (a.rank ?? 99) - (b.rank ?? 99))[0];
    return { model: instance.model, instance: instance.id, source: 'exo', node: runner ? (runner.nodeName ?? runner.nodeId) : 'unknown' };
  }

  /** Gauges and snapshot-held counters: reset and read from the snapshot at each scrape, so a deleted instance leaves no stale series. */
  private snapshotMetrics(): void {
    const registers = [this.registry];
    // prom-client calls collect() with the metric as `this`: the snapshot is read through these.
    const snapshot = (): Snapshot => this.sources.snapshot();
    const labelsOf = (instance: InstanceSnapshot): InstanceLabels => this.labelsOf(instance);
    const perInstance = (name: string, help: string, value: (i: InstanceSnapshot) => number | null, extra: string[] = []) =>
      new Gauge({
        name,
        help,
        labelNames: [...INSTANCE_LABELS, ...extra],
        registers,
        collect() {
          this.reset();
          for (const instance of snapshot().instances) {
            const v = value(instance);
            if (v != null) this.set(labelsOf(instance), v);
          }
        },
      });
    perInstance(
      'exobar_queue_depth',
      'Requests waiting, not yet being prefilled or decoded.',
      (i) => i.queue.requests.filter((r) => r.phase === 'queued' || r.phase === 'awaiting_ack').length,
    );
    perInstance('exobar_requests_in_flight', 'Requests admitted and not ended (waiting, prefilling, decoding or cancelling).', (i) => i.queue.requests.length);
    perInstance('exobar_pending_cancellations', 'Cancellations asked for and not yet confirmed.', (i) => i.pendingCancels.length);
    perInstance('exobar_fast_synch', 'Fast synch (MLX_METAL_FAST_SYNCH) per local instance as the policy decided it: 1 on, 0 off.', (i) =>
      i.source === 'local' ? Number(i.fastSynch.enabled) : null,
    );
    // The runner's prompt cache (docs/runner-protocol.md, "Prompt cache"): its figures since the runner started.
    const cacheOf = (i: InstanceSnapshot) => (i.source === 'local' ? (i.runnerEngine?.promptCache ?? null) : null);
    perInstance('exobar_prompt_cache_bytes', "Bytes held by the runner's prompt cache.", (i) => cacheOf(i)?.bytes ?? null);
    perInstance('exobar_prompt_cache_cap_bytes', "The cap of the runner's prompt cache (0: off).", (i) => cacheOf(i)?.capBytes ?? null);
    const perInstanceCounter = (name: string, help: string, value: (i: InstanceSnapshot) => number | null) =>
      new Counter({
        name,
        help,
        labelNames: [...INSTANCE_LABELS],
        registers,
        collect() {
          this.reset();
          for (const instance of snapshot().instances) {
            const v = value(instance);
            if (v != null) this.inc(labelsOf(instance), v);
          }
        },
      });
    perInstanceCounter('exobar_prompt_cache_hits_total', 'Prompts the prompt cache served a prefix of (since the runner started).', (i) => cacheOf(i)?.hits ?? null);
    perInstanceCounter('exobar_prompt_cache_misses_total', 'Prompts the prompt cache had no prefix of (since the runner started).', (i) => cacheOf(i)?.misses ?? null);
    perInstanceCounter('exobar_prompt_cache_hit_tokens_total', 'Prompt tokens served from the prompt cache, not prefilled (since the runner started).', (i) =>
      cacheOf(i)?.hitTokens ?? null,
    );
    new Gauge({
      name: 'exobar_instance_state',
      help: `The instance's lifecycle state: 1 for its current state (${INSTANCE_LIFECYCLES.join(', ')}), 0 for the others.`,
      labelNames: [...INSTANCE_LABELS, 'state'],
      registers,
      collect() {
        this.reset();
        for (const instance of snapshot().instances) {
          const now = instanceLifecycle(instance);
          for (const state of INSTANCE_LIFECYCLES) this.set({ ...labelsOf(instance), state }, Number(state === now));
        }
      },
    });
    new Gauge({
      name: 'exobar_warnings_active',
      help: 'Warnings shown now, by code.',
      labelNames: ['code'],
      registers,
      collect() {
        this.reset();
        const counts = new Map<string, number>();
        for (const w of snapshot().warnings) counts.set(w.code, (counts.get(w.code) ?? 0) + 1);
        for (const [code, n] of counts) this.set({ code }, n);
      },
    });
    new Gauge({
      name: 'exobar_exo_attached',
      help: 'Whether an exo node is attached: 1 yes, 0 no.',
      registers,
      collect() {
        this.set(Number(snapshot().exo != null));
      },
    });
    new Gauge({
      name: 'exobar_exo_reachable',
      help: 'Whether the attached exo node answered its last poll: 1 yes, 0 no (absent while none is attached).',
      registers,
      collect() {
        this.reset();
        const exo = snapshot().exo;
        if (exo) this.set(Number(exo.connected));
      },
    });
    new Counter({
      name: 'exobar_exo_poll_errors_total',
      help: "Failed polls of the attached exo node's API (since it was attached).",
      registers,
      collect() {
        this.reset();
        this.inc(snapshot().exo?.pollErrors ?? 0);
      },
    });
    new Counter({
      name: 'exobar_rejected_inputs_total',
      help: 'Inputs refused at a boundary (http, ipc, runner).',
      labelNames: ['boundary'],
      registers,
      collect() {
        this.reset();
        for (const [boundary, n] of Object.entries(snapshot().rejectedInputs)) this.inc({ boundary }, n);
      },
    });
  }
}
