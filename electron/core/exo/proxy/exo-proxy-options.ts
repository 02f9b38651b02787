/**
 * What the exo proxy's routes are given (the attached exo, the traffic records, the
 * hold, the settings it reads), and the models it sends to exo by default.
 */
import type { ApiRoute } from '../../api/route-types';
import type { ExoHold } from './exo-hold';
import type { ExoStateSource, ExoTraffic } from './exo-traffic';

export interface ExoProxyOptions {
  /** The attached exo (null: none attached, everything goes to the local routes). */
  source: () => ExoStateSource | null;
  traffic: ExoTraffic;
  hold: ExoHold;
  /** The models the attached exo serves; by default those with an instance in its state. */
  exoModels?: () => ReadonlySet<string>;
  /**
   * Longest silence from exo on an open request before it counts as hung. exo writes a
   * keep-alive after 10 s without output, so 30 s of nothing means the node is stuck.
   */
  idleTimeoutMs?: number;
  /**
   * The setting `exo.placeOnDemand`; off (the default): a request for a model exo has
   * downloaded but not placed gets a 404 that says how to place it (exo-not-placed.ts).
   */
  placeOnDemand?: () => boolean;
  /**
   * Places a model on exo and resolves when its runners are ready (exo-place-on-demand.ts);
   * with `placeOnDemand` on, a request for a model exo has downloaded but not placed waits
   * for it. `used` restarts the model's idle clock when a request ends.
   */
  placer?: ExoPlacer;
  /**
   * Why exo cannot serve `model` now, in words, or null: every instance of it has kept
   * no working runner on some Mac past the grace (exo would leave the request hanging:
   * exo #2120, #1458). Such a request is answered 503 at once instead.
   */
  unservable?: (model: string) => string | null;
  /** The routes a non-exo request falls through to (default: exobar's OpenAI routes). */
  localRoutes?: ApiRoute[];
}

/** Places a model on exo for a request (`exo.placeOnDemand` on). */
export interface ExoPlacer {
  place(model: string, keepAliveSeconds?: number | null): Promise<void>;
  use(model: string): void;
}

export const DEFAULT_EXO_IDLE_TIMEOUT_MS = 30_000;

/** The models an exo state has instances of. */
export function exoModelsOf(source: ExoStateSource | null): ReadonlySet<string> {
  const instances = source?.reading.instances;
  return new Set(instances ? [...instances.values()].map((i) => i.modelId) : []);
}
