/**
 * The node's requests: each one submitted is routed to its model's least loaded
 * instance, kept by id while in flight (for a cancel), and once ended its timeline is
 * kept (the last 2,000, for the diagnostic bundle) and handed to every `onEnded`
 * listener (the request log, the metrics, the history).
 */
import { randomBytes } from 'node:crypto';
import { GenerationParamsSchema } from '../../../shared/runner-protocol';
import type { CancelledBy } from '../../../shared/request-record';
import { countPromptTokens } from '../../../shared/token-count';
import type { PacingController } from '../pacing/pacing-controller';
import { beyondText, featureRefusal } from './feature-gate';
import type { Instance } from './instance';
import type { InstanceSet } from './instance-set';
import { NodeError } from '../events/node-error';
import { NodeRequest } from './node-request';
import type { EndedRequest, RequestEvent, RequestHandle, RequestTimeline, SubmitRequest } from './node-types';

const TIMELINE_HISTORY = 2000;

export interface RequestBookDeps {
  instances: InstanceSet;
  /** The adaptive pacing policy decides on each request's token gaps. */
  pacing: Pick<PacingController, 'observeGap'>;
  /** Throws model_not_found for a model the node does not know (a known one not running gets its own words). */
  findModel(id: string): unknown;
}

export class RequestBook {
  private readonly index = new Map<string, { request: NodeRequest; instance: Instance }>();
  private readonly endedTimelines: RequestTimeline[] = [];
  private readonly endedListeners = new Set<(ended: EndedRequest) => void>();

  constructor(private readonly deps: RequestBookDeps) {}

  /** Validates a request and admits it to its model's least loaded instance; throws a NodeError when it cannot. */
  submit(input: SubmitRequest, onEvent: (event: RequestEvent) => void): RequestHandle {
    const parsed = GenerationParamsSchema.safeParse({
      messages: input.messages,
      maxTokens: input.maxTokens,
      temperature: input.temperature ?? null,
      seed: input.seed ?? null,
      ...(input.stop && input.stop.length > 0 ? { stop: input.stop } : {}),
      ...beyondText(input),
    });
    if (!parsed.success) throw new NodeError('invalid_request', parsed.error.issues.map((i) => i.message).join('; '), 400);
    const candidates = this.deps.instances.all().filter((i) => i.model.id === input.model);
    if (candidates.length === 0) {
      this.deps.findModel(input.model);
      throw new NodeError('model_not_found', `model "${input.model}" is not running; launch it first`, 404);
    }
    // The least loaded instance that can take work; a failed one only if nothing else is left.
    const instance = candidates.sort((a, b) => Number(!!a.fatalError) - Number(!!b.fatalError) || a.load - b.load)[0]!;
    const refusal = featureRefusal(parsed.data, instance.features, instance.model.id);
    if (refusal) throw refusal;
    const id = `chatcmpl-${randomBytes(12).toString('hex')}`;
    const request = new NodeRequest(
      id,
      instance.id,
      instance.model.id,
      parsed.data,
      countPromptTokens(parsed.data.messages),
      input.arrivedAt ?? performance.now(),
      onEvent,
      (gap) => {
        const busy = this.deps.instances.busyNeighbours(instance, gap);
        instance.sharing.add(gap, busy);
        request.sharing.add(gap, busy);
        // The adaptive policy decides on these same gaps: is a neighbour's prefill slowing this stream?
        this.deps.pacing.observeGap(
          instance.id,
          gap.gapMs,
          busy.some((b) => b.phase === 'prefilling'),
        );
      },
    );
    request.client = input.client ?? null;
    request.api = input.api ?? null;
    instance.admit(request);
    this.index.set(id, { request, instance });
    return { id, model: request.model, instanceId: instance.id, promptTokens: request.promptTokens, created: request.created, done: request.done };
  }

  /** Cancels a request in flight; false when there is none with this id. */
  cancel(requestId: string, by: CancelledBy): boolean {
    const entry = this.index.get(requestId);
    if (!entry || entry.request.ended) return false;
    entry.instance.cancel(entry.request, by);
    return true;
  }

  onEnded(listener: (ended: EndedRequest) => void): () => void {
    this.endedListeners.add(listener);
    return () => this.endedListeners.delete(listener);
  }

  /** An instance's request ended: its timeline is kept and said to every listener. */
  recordEnded(request: NodeRequest, instance: Instance): void {
    this.index.delete(request.id);
    const timeline = this.timelineOf(request, instance);
    this.endedTimelines.push(timeline);
    if (this.endedTimelines.length > TIMELINE_HISTORY) this.endedTimelines.shift();
    if (this.endedListeners.size === 0) return;
    const ended: EndedRequest = {
      timeline,
      arrivedAtEpochMs: request.arrivedAtEpochMs,
      endedAtEpochMs: Date.now(),
      client: request.client,
      api: request.api,
      cancelledBy: request.outcome === 'cancelled' ? request.cancelledBy : null,
      errorCode: request.errorCode,
      stats: request.stats,
      itlGapsMs: request.decode.gapsMs(),
    };
    for (const listener of this.endedListeners) listener(ended);
  }

  /** The ended requests' timelines, then those in flight. */
  timelines(): RequestTimeline[] {
    const live = [...this.index.values()].map(({ request, instance }) => this.timelineOf(request, instance));
    return [...this.endedTimelines, ...live];
  }

  private timelineOf(request: NodeRequest, instance: Instance): RequestTimeline {
    const until = request.firstTokenAt ?? request.endedAt ?? performance.now();
    return request.timeline(this.deps.instances.busyDuring(instance, request.arrivedAt, until));
  }
}
