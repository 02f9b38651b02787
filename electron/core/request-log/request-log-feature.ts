/**
 * The request log as a core feature: every ended request, local or through exobar to
 * exo, as one record (the feed the metrics and the history count from too), the last
 * 10,000 kept across restarts with the loads and unloads beside them, and its endpoints.
 */
import type { CoreContext, StartedFeature } from '../core-feature';
import type { ExoTraffic } from '../exo/proxy/exo-traffic';
import type { ExobarNode } from '../node/node-types';
import { logModelEvents } from '../on-demand/model-events';
import { RequestFeed } from './request-feed';
import { RequestLog } from './request-log';
import { requestLogRoutes } from './request-log-routes';

export function startRequestLog(
  ctx: CoreContext,
  options: { node: ExobarNode; traffic: ExoTraffic; logRequests: boolean },
): StartedFeature & { requestFeed: RequestFeed; requestLog: RequestLog } {
  const requestFeed = new RequestFeed(options.node, options.traffic);
  // A corrupt file is set aside and said here.
  const requestLog = new RequestLog({ dataDir: ctx.dataDir });
  if (requestLog.status().problem) ctx.logger.warn({ component: 'request-log' }, requestLog.status().problem!);
  if (options.logRequests) requestFeed.onRecord((record) => requestLog.record(record));
  // Loads and unloads (local, and exo placements on demand) beside the requests.
  const stopModelEvents = logModelEvents(ctx.eventLog, requestLog);
  return {
    requestFeed,
    requestLog,
    routes: requestLogRoutes(requestLog),
    stop() {
      requestFeed.close();
      stopModelEvents();
      requestLog.close();
    },
  };
}
