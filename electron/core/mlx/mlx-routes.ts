/**
 * Control endpoints of the MLX engine, behind the bearer token:
 *
 * - `GET /api/mlx`: whether the runtime is there, why not, local models, setup progress.
 * - `POST /api/mlx/refresh`: looks for the runtime and the local models again.
 * - `POST /api/mlx/setup`: starts "Set up MLX runtime" (202); progress is in the snapshot's
 *   `mlx.setup`. Refused with 409 where MLX cannot run (not macOS on Apple silicon).
 */
import { ApiError } from '../api/api-error';
import type { ApiRoute } from '../api/route-types';
import type { MlxRuntimeService } from './mlx-runtime-service';

export function mlxRoutes(service: MlxRuntimeService): ApiRoute[] {
  return [
    { method: 'GET', path: '/api/mlx', auth: true, handle: (ctx) => ctx.json(200, service.snapshot()) },
    { method: 'POST', path: '/api/mlx/refresh', auth: true, handle: async (ctx) => ctx.json(200, await service.refresh()) },
    {
      method: 'POST',
      path: '/api/mlx/setup',
      auth: true,
      handle: (ctx) => {
        if (!service.supported) {
          throw new ApiError(409, 'mlx_unsupported', 'MLX runs only on macOS on Apple silicon; the sim engine serves the sim models here');
        }
        void service.startSetup();
        ctx.json(202, service.snapshot());
      },
    },
  ];
}
