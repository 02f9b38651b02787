/**
 * Models on demand as a core feature (docs/on-demand.md): the loader that loads a model
 * for the request that names it and unloads idle ones, and the residency endpoints.
 */
import type { CoreContext, StartedFeature } from '../core-feature';
import type { ExobarNode } from '../node/node-types';
import { ModelLoader, type ModelLoaderOptions } from './model-loader';
import { residencyRoutes } from './residency-routes';

export function startOnDemand(
  ctx: CoreContext,
  node: ExobarNode,
  options: Pick<ModelLoaderOptions, 'reapIntervalMs'> = {},
): StartedFeature & { modelLoader: ModelLoader } {
  const modelLoader = new ModelLoader({ node, settings: () => ctx.getSettings(), fitChecker: ctx.fitChecker, ...options });
  modelLoader.start();
  return { modelLoader, routes: residencyRoutes(), stop: () => modelLoader.stop() };
}
