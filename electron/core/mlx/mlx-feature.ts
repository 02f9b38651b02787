/**
 * The MLX engine as a core feature: the runtime service (its `mlx` section, its local
 * models for the node's catalog), looked for once at start without making the API wait,
 * and its endpoints. Its stop ends any helper command still running (a probe, the login
 * shell's PATH, pip), so none outlives exobar.
 */
import type { CoreContext, StartedFeature } from '../core-feature';
import { mlxRoutes } from './mlx-routes';
import { MlxRuntimeService } from './mlx-runtime-service';
import { stopRunningCommands } from './run-command';

export function startMlx(ctx: CoreContext): StartedFeature & { mlx: MlxRuntimeService } {
  const mlx = new MlxRuntimeService({ dataDir: ctx.dataDir, getSettings: () => ctx.getSettings() });
  mlx.attach(ctx.hub);
  // Looking for Python and scanning model folders takes a moment: the API does not wait.
  void mlx.refresh().catch((error: unknown) => ctx.logger.warn({ err: error }, 'looking for the MLX runtime failed'));
  return { mlx, routes: mlxRoutes(mlx), stop: stopRunningCommands };
}
