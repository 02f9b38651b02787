/**
 * The history as a core feature: per model and minute, 30 days, from the same records
 * as the request log, the restarts the event log says and the snapshot's queues;
 * `slower_than_usual` read from it as a warning; its endpoint.
 */
import type { CoreContext, StartedFeature } from '../core-feature';
import type { ExobarNode } from '../node/node-types';
import type { RequestFeed } from '../request-log/request-feed';
import { History } from './history';
import { historyRoutes } from './history-routes';
import { watchSlowerThanUsual } from './slower-warnings';

/** How often the queues are sampled: the history keeps minutes. */
const QUEUE_SAMPLE_MS = 1_000;

export function startHistory(
  ctx: CoreContext,
  options: { node: ExobarNode; feed: RequestFeed; slowerCheckMs?: number },
): StartedFeature & { history: History } {
  const { node } = options;
  const history = new History({ dataDir: ctx.dataDir });
  if (history.status().problem) ctx.logger.warn({ component: 'history' }, history.status().problem!);
  options.feed.onRecord((record) => history.observe(record));
  const stopRestarts = ctx.eventLog.subscribe((event) => {
    if (event.kind !== 'runner_restart_scheduled') return;
    const model = node.snapshot().instances.find((i) => i.id === event.instanceId)?.model;
    if (model) history.restart(model);
  });
  const stopQueueSamples = node.onSnapshot((snapshot) => {
    const waiting = new Map<string, number>();
    for (const i of snapshot.instances) {
      const n = i.queue.requests.filter((r) => r.phase === 'queued' || r.phase === 'awaiting_ack').length;
      waiting.set(i.model, (waiting.get(i.model) ?? 0) + n);
    }
    for (const [model, n] of waiting) history.queue(model, n);
  }, QUEUE_SAMPLE_MS);
  // slower_than_usual as an active warning, read from the history each minute.
  const stopSlowerWarnings = watchSlowerThanUsual(history, node, ctx.hub, options.slowerCheckMs);
  return {
    history,
    routes: historyRoutes(history),
    stop() {
      stopRestarts();
      stopQueueSamples();
      stopSlowerWarnings();
      history.close();
    },
  };
}
