/**
 * One proxied chat request in flight, as the routes hold it: its life (the request state
 * machine), how to stop its upstream call, and exobar's cancel of it at exo. Entering an
 * end records the request on the traffic; a change the table refuses is counted on the
 * traffic (the bundle's exo/proxy-refused-transitions.json) and logged once, at warn.
 */
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { RouteContext } from '../../api/route-types';
import type { ExoDialect } from './exo-dialect';
import type { ExoTraffic, ProxiedRequest } from './exo-traffic';
import { callExo, readAll } from './exo-upstream';
import { ProxiedRequestState, type ProxiedRequestPhase } from './proxied-request-state';

export interface ProxiedCall {
  life: ProxiedRequestState;
  /** Stops the upstream call (a no-op until it is made). */
  abort: () => void;
}

/** exo's answer to one proxied request, as a relay (whole or stream) gets it once its head came. */
export interface RelayedAnswer {
  ctx: RouteContext;
  record: ProxiedRequest;
  life: ProxiedRequestState;
  res: IncomingMessage;
  /** The idle timer, refreshed by exo's bytes, cleared at the end. */
  idle: NodeJS.Timeout;
  /** Lets the call go: it is no longer in flight. */
  done(): void;
  /** The dialect it speaks (how its stream is read and ended). */
  dialect: ExoDialect;
}

/** The message of the log record a refused change writes. */
export const REFUSED_PROXIED_TRANSITION = 'refused proxied request transition';

/** Opens `record`'s life in `initial` and keeps it in `calls` until the routes let it go. */
export function openProxiedCall(
  calls: Map<ProxiedRequest, ProxiedCall>,
  traffic: ExoTraffic,
  log: Pick<Logger, 'warn'>,
  record: ProxiedRequest,
  initial: Extract<ProxiedRequestPhase, 'loading' | 'waiting'>,
): ProxiedCall {
  const call: ProxiedCall = {
    life: new ProxiedRequestState(initial, {
      changed: (change) => traffic.follow(record, change.to, call.life.end, change.reason),
      refused: (change) => {
        traffic.refusedTransition(record, change);
        log.warn({ requestId: record.id, model: record.model, from: change.from, to: change.to, cause: change.reason }, REFUSED_PROXIED_TRANSITION);
      },
    }),
    abort: () => undefined,
  };
  traffic.follow(record, initial);
  calls.set(record, call);
  return call;
}

/** Tells exo to cancel the record's command on the node that received it; returns exo's answer. */
export async function cancelAtExo(record: ProxiedRequest): Promise<{ status: number; body: Buffer } | null> {
  if (!record.commandId) return null;
  const call = callExo(record.upstreamUrl, 'POST', `/v1/cancel/${encodeURIComponent(record.commandId)}`);
  const res = await call.response;
  return { status: res.statusCode ?? 0, body: await readAll(res, 64 * 1024) };
}
