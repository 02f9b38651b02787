/**
 * A chat request for a model the attached exo has downloaded (DownloadCompleted on some
 * Mac) but not placed: with `exo.placeOnDemand` off exobar never places it on the
 * operator's behalf, nor loads it locally, nor answers "unknown model". It answers 404
 * saying so and how to place it with exo's own placement API.
 */
import { ApiError } from '../../api/api-error';
import type { ExoStateSource } from './exo-traffic';

/** The 404 for `model` when the attached exo has it downloaded and no instance of it; else null. */
export function refuseDownloadedNotPlaced(source: ExoStateSource, model: string, exoModels: ReadonlySet<string>): ApiError | null {
  if (exoModels.has(model)) return null;
  const on = (source.reading.downloads ?? []).filter((d) => d.modelId === model && d.status === 'completed');
  if (on.length === 0) return null;
  const macs = on.length === 1 ? '1 Mac' : `${on.length} Macs`;
  const query = `model_id=${encodeURIComponent(model)}&sharding=Pipeline&instance_meta=MlxRing&min_nodes=1`;
  return new ApiError(
    404,
    'model_not_placed',
    `model '${model}' is downloaded on the attached exo (${macs}) but not placed, and exo.placeOnDemand is off; ` +
      `place it first: GET ${source.url}/instance/placement?${query}, then POST ${source.url}/instance with the instance it answers ` +
      `(or place it in exo's dashboard), or turn on exo.placeOnDemand`,
    { param: 'model', headers: { 'x-should-retry': 'false' } },
  );
}
