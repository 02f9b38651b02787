/**
 * The store's exo actions: this Mac's exo process (start, stop, restart), testing an
 * address, attaching and detaching, and the models exo took away (place again, forget).
 */
import { errorMessage } from '../lib/error-message';
import type { ActionSlice } from './action-context';

export const exoActions: ActionSlice<'controlExoProcess' | 'probeExo' | 'attachExo' | 'detachExo' | 'placeLostModelAgain' | 'dismissLostModel'> = ({
  bridge,
  run,
}) => ({
  // One key for the three: while one is under way the others wait (the snapshot shows its progress).
  controlExoProcess: (request) => run('exo-process', () => bridge.controlExoProcess(request)),
  async probeExo(url) {
    try {
      return await bridge.probeExo(url);
    } catch (error) {
      return { ok: false, url, error: errorMessage(error) };
    }
  },
  attachExo: (url) =>
    run('exo-attach', async () => {
      await bridge.attachExo(url);
      return `Attached to exo at ${url}`;
    }),
  detachExo: () => run('exo-detach', () => bridge.detachExo()),
  placeLostModelAgain: (model) =>
    run(`lost:${model}`, async () => {
      const placed = await bridge.placeLostModelAgain(model);
      // The warning clears by itself once exo serves the model again (the snapshot says so).
      return placed.alreadyPlaced ? `${model} is already placed on exo` : `Placing ${model} again on ${placed.nodes.join(' and ')}`;
    }),
  dismissLostModel: (model) => run(`lost:${model}`, () => bridge.dismissLostModel(model)),
});
