/**
 * The Prometheus metrics as a core feature: counted from every ended request's record
 * and from the event log, read from the snapshot at each scrape, served at `/metrics`.
 */
import type { CoreContext, StartedFeature } from '../core-feature';
import type { ExobarNode } from '../node/node-types';
import type { RequestFeed } from '../request-log/request-feed';
import { ExobarMetrics } from './exobar-metrics';
import { metricsRoutes } from './metrics-route';

export interface MetricsFeatureOptions {
  node: ExobarNode;
  feed: RequestFeed;
  token: string;
  /** The token's file, said in the refusal; null when the token came from the environment. */
  tokenFile: string | null;
  bindHost: string;
}

export function startMetrics(ctx: CoreContext, options: MetricsFeatureOptions): StartedFeature {
  const metrics = new ExobarMetrics({ snapshot: () => options.node.snapshot(), mac: options.feed.mac });
  options.feed.onRecord((record, detail) => metrics.observeRequest(record, detail.itlGapsMs));
  const stopEvents = ctx.eventLog.subscribe((event) => metrics.observeEvent(event));
  return {
    routes: metricsRoutes({
      metrics,
      token: options.token,
      tokenFile: options.tokenFile,
      bindHost: options.bindHost,
      isPublic: () => ctx.getSettings().metrics.public,
    }),
    stop: stopEvents,
  };
}
