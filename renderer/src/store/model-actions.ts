/**
 * The store's catalog and MLX runtime actions: the model list with each model's fit,
 * "Set up MLX runtime" and looking for the runtime again.
 */
import { errorMessage } from '../lib/error-message';
import type { ActionSlice } from './action-context';

export const modelActions: ActionSlice<'loadModels' | 'setupMlxRuntime' | 'refreshMlxRuntime'> = ({ bridge, set, get, run }) => ({
  async loadModels() {
    set((s) => ({ models: { ...s.models, status: 'loading', error: null } }));
    try {
      const models = await bridge.listModels();
      // The fit words are an extra: a server without them (or a failed reading) still lists the models.
      const fits = await bridge.checkModelFits().then(
        (list) => Object.fromEntries(list.map((f) => [f.model, f])),
        () => ({}),
      );
      set({ models: { status: 'ready', models, error: null, fits } });
    } catch (error) {
      // Keep the last list: a failed reload should not empty the panel.
      set((s) => ({ models: { status: 'error', models: s.models.models, error: errorMessage(error), fits: s.models.fits } }));
    }
  },
  // The outcome (running, failed with pip's output, done) is shown from the snapshot,
  // so only a refusal to start becomes a notice.
  setupMlxRuntime: () => run('mlx-setup', () => bridge.setupMlxRuntime()),
  refreshMlxRuntime: () =>
    run('mlx-refresh', async () => {
      await bridge.refreshMlxRuntime();
      await get().actions.loadModels();
    }),
});
