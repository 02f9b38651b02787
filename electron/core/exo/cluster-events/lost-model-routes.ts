/**
 * The operator's answers to an `exo_model_lost` warning, behind the bearer token:
 *
 * - `POST /api/exo/lost-models/place-again {"model", "acknowledgeRisk"?}`: places the
 *   model again as it was (place-again.ts); 409 `fast_synch_shared_gpu` when it would
 *   be a second ring model on a Mac with fast synch on, 409 `launch_failed` when exo
 *   cannot place it or a Mac lacks the memory, with the reason in words.
 * - `POST /api/exo/lost-models/dismiss {"model"}`: forgets the loss.
 *
 * 404 `model_not_found` when the model is not lost (or no exo is attached).
 */
import { z } from 'zod';
import { ApiError } from '../../api/api-error';
import type { ApiRoute } from '../../api/route-types';
import type { ExoAttachment } from '../exo-attachment';
import { placeAgain } from './place-again';

const PlaceAgainBodySchema = z.strictObject({ model: z.string().min(1).max(512), acknowledgeRisk: z.boolean().default(false) });
const DismissBodySchema = z.strictObject({ model: z.string().min(1).max(512) });

function notLost(model: string): ApiError {
  return new ApiError(404, 'model_not_found', `${model} is not a lost exo model (nothing to place again or dismiss)`);
}

/** The lost-model endpoints over one attachment. */
export function lostModelRoutes(attachment: Pick<ExoAttachment, 'lostModels' | 'fastSynchOf'>): ApiRoute[] {
  return [
    {
      method: 'POST',
      path: '/api/exo/lost-models/place-again',
      auth: true,
      async handle(ctx) {
        const body = await ctx.body(PlaceAgainBodySchema);
        const access = attachment.lostModels();
        const lost = access?.lost.get(body.model);
        if (!access || !lost) throw notLost(body.model);
        const result = await placeAgain({ url: access.url, lost, fastSynchOf: attachment.fastSynchOf, acknowledgeRisk: body.acknowledgeRisk });
        if (!result.alreadyPlaced) access.lost.placedAgain(body.model, Date.now());
        await access.refresh();
        ctx.json(200, result);
      },
    },
    {
      method: 'POST',
      path: '/api/exo/lost-models/dismiss',
      auth: true,
      async handle(ctx) {
        const body = await ctx.body(DismissBodySchema);
        const access = attachment.lostModels();
        if (!access?.lost.dismiss(body.model)) throw notLost(body.model);
        await access.refresh();
        ctx.json(200, { model: body.model, dismissed: true });
      },
    },
  ];
}
