/**
 * The operator's answers to an `exo_model_lost` warning, behind the bearer token:
 *
 * - `POST /api/exo/lost-models/place-again {"model", "acknowledgeRisk"?}`: places the
 *   model again as it was (place-again.ts); for a model whose load stalled
 *   (`exo_load_stalled`), stops the stalled instance once the checks pass and places
 *   it again as it was (load-stall/place-stalled-again.ts); 409 `fast_synch_shared_gpu` when it would
 *   be a second ring model on a Mac with fast synch on, 409 `launch_failed` when exo
 *   cannot place it or a Mac lacks the memory, with the reason in words.
 * - `POST /api/exo/lost-models/dismiss {"model"}`: forgets the loss.
 *
 * 404 `model_not_found` when the model is neither lost nor stalled (or no exo is attached).
 */
import { z } from 'zod';
import type { ApiRoute } from '../../api/route-types';
import { dismissLostModel, placeLostModelAgain, type LostModelAccess } from './lost-model-actions';

const PlaceAgainBodySchema = z.strictObject({ model: z.string().min(1).max(512), acknowledgeRisk: z.boolean().default(false) });
const DismissBodySchema = z.strictObject({ model: z.string().min(1).max(512) });

/** The lost-model endpoints over one attachment. */
export function lostModelRoutes(attachment: LostModelAccess): ApiRoute[] {
  return [
    {
      method: 'POST',
      path: '/api/exo/lost-models/place-again',
      auth: true,
      async handle(ctx) {
        const body = await ctx.body(PlaceAgainBodySchema);
        ctx.json(200, await placeLostModelAgain(attachment, body.model, body.acknowledgeRisk));
      },
    },
    {
      method: 'POST',
      path: '/api/exo/lost-models/dismiss',
      auth: true,
      async handle(ctx) {
        const body = await ctx.body(DismissBodySchema);
        await dismissLostModel(attachment, body.model);
        ctx.json(200, { model: body.model, dismissed: true });
      },
    },
  ];
}
