/**
 * The operator's two answers to an `exo_model_lost` warning, once for both ways in:
 * the control API's routes (lost-model-routes.ts) and the app's IPC backend call these,
 * so Place again and Dismiss do the same thing from the browser and from the popover.
 * Place again answers an `exo_load_stalled` warning too: the stalled instance is stopped,
 * then placed again as it was (load-stall/place-stalled-again.ts).
 */
import type { PlaceAgainResult } from '../../../../shared/exo-cluster-events';
import { NodeError } from '../../node/node-types';
import type { ExoAttachment } from '../attach/exo-attachment';
import { placeAgain } from './place-again';
import { placeStalledAgain } from '../load-stall/place-stalled-again';

/** What the answers need of the attachment. */
export type LostModelAccess = Pick<ExoAttachment, 'lostModels' | 'fastSynchOf' | 'stalledLoad' | 'stopInstance'>;

function notLost(model: string): NodeError {
  return new NodeError('model_not_found', `${model} is not a lost exo model nor one whose load stalled (nothing to place again or dismiss)`, 404);
}

/**
 * Places a lost model again as it was (place-again.ts), or stops a stalled load and
 * places it again, then reads exo's state at once so the snapshot shows it loading.
 * Rejects `model_not_found` when the model is neither lost nor stalled.
 */
export async function placeLostModelAgain(attachment: LostModelAccess, model: string, acknowledgeRisk = false): Promise<PlaceAgainResult> {
  const access = attachment.lostModels();
  const lost = access?.lost.get(model);
  if (access && !lost) {
    const placed = await placeStalledAgain(attachment, model, acknowledgeRisk);
    if (placed) {
      await access.refresh();
      return placed;
    }
  }
  if (!access || !lost) throw notLost(model);
  const result = await placeAgain({ url: access.url, lost, fastSynchOf: attachment.fastSynchOf, acknowledgeRisk });
  if (!result.alreadyPlaced) access.lost.placedAgain(model, Date.now());
  await access.refresh();
  return result;
}

/** Forgets a lost model (its warning goes). Rejects `model_not_found` when the model is not lost. */
export async function dismissLostModel(attachment: LostModelAccess, model: string): Promise<void> {
  const access = attachment.lostModels();
  if (!access?.lost.dismiss(model)) throw notLost(model);
  await access.refresh();
}
