/**
 * Serving through exobar on an attached exo, in one object for the integrator: the
 * traffic records, the hold and the proxy routes, over the exo client.
 */
import type { ApiRoute } from '../../api/route-types';
import { ExoHold } from './exo-hold';
import { exoProxyRoutes, type ExoProxyOptions } from './exo-proxy-routes';
import { ExoTraffic, type ExoStateSource } from './exo-traffic';
import { ExoSharing } from '../../sharing/exo-sharing';

export interface ExoServingOptions extends Partial<Omit<ExoProxyOptions, 'source' | 'traffic' | 'hold'>> {
  /** The attached exo client (or null while none is attached). */
  source: () => ExoStateSource | null;
  /** The hold setting (on by default). */
  holdEnabled?: () => boolean;
  /** exo is busy with the model for something exobar did not send (see ExoHold); never by default. */
  modelBusyAtExo?: (model: string) => boolean;
}

export interface ExoServing {
  traffic: ExoTraffic;
  /** Each exo instance's decode alone and beside the instances sharing its Macs, from the proxied traffic. */
  sharing: ExoSharing;
  hold: ExoHold;
  /** Register before exobar's own routes (the API server's `extraRoutes`). */
  routes: ApiRoute[];
}

/** Creates the traffic records, the hold and the proxy routes. Call `traffic.reconcile()` after each exo poll. */
export function createExoServing(options: ExoServingOptions): ExoServing {
  const traffic = new ExoTraffic(options.source);
  const hold = new ExoHold(traffic, options.holdEnabled ?? (() => true), options.modelBusyAtExo);
  const routes = exoProxyRoutes({ ...options, source: options.source, traffic, hold });
  return { traffic, hold, routes, sharing: new ExoSharing(traffic, options.source) };
}
