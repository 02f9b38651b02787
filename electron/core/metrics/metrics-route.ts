/**
 * `GET /metrics`: Prometheus' text format. It needs the control token as a bearer
 * token (Prometheus' `authorization` or `bearer_token_file` in a scrape config), unless
 * the setting `metrics.public` is on and the server listens on a loopback address (then
 * a scraper on this Mac needs no token; a server on another interface keeps asking
 * for it, so the switch never opens the metrics to the network).
 */
import { isIP } from 'node:net';
import { checkBearer, type TokenFile } from '../api/bearer-auth';
import type { ApiRoute } from '../api/route-types';
import type { ExobarMetrics } from './exobar-metrics';

/** True for 127.0.0.0/8, ::1 and localhost (an IPv4-mapped loopback included). */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .replace(/^\[|\]$/g, '')
    .replace(/^::ffff:/i, '')
    .toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  return isIP(h) === 4 && h.startsWith('127.');
}

export interface MetricsRouteOptions {
  metrics: ExobarMetrics;
  token: string;
  tokenFile: TokenFile;
  /** The interface the server binds. */
  bindHost: string;
  /** The setting `metrics.public`, read per scrape. */
  isPublic: () => boolean;
}

export function metricsRoutes(options: MetricsRouteOptions): ApiRoute[] {
  return [
    {
      method: 'GET',
      path: '/metrics',
      // Checked here: whether the token is needed depends on a setting and the bound address.
      auth: false,
      async handle(ctx) {
        const open = options.isPublic() && isLoopbackHost(options.bindHost) && isLoopbackHost(ctx.req.socket.remoteAddress ?? '');
        if (!open) {
          const refusal = checkBearer(ctx.req, options.token, options.tokenFile);
          if (refusal) throw refusal;
        }
        const { text, contentType } = await options.metrics.scrape();
        ctx.res.writeHead(200, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-store' });
        ctx.res.end(ctx.req.method === 'HEAD' ? undefined : text);
      },
    },
  ];
}
