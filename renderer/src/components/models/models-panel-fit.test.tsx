/**
 * The Models panel's fit words: each model not running says fits, tight or does not fit
 * with the check's figures. The answers come from the real check (electron/core/fit),
 * as `GET /api/models/fit` computes them, for a Mac with 3.9 GiB free.
 */
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { SIM_MODELS } from '../../../../shared/catalog';
import { fitVerdict, fitWords, type ModelFit } from '../../../../shared/model-fit';
/* eslint-disable no-restricted-imports -- a test, never bundled into the page */
import { checkFit } from '../../../../electron/core/fit/check-fit';
import { estimateModelMemory } from '../../../../electron/core/fit/model-memory';
/* eslint-enable no-restricted-imports */
import { instance, snapshot } from '../../../../test/support/renderer/fixtures';
import { renderApp } from '../../../../test/support/renderer/render-app';
import { ModelsPanel } from './models-panel';

afterEach(cleanup);

const GiB = 1024 ** 3;

async function fitsOn(freeGB: number): Promise<ModelFit[]> {
  return Promise.all(
    SIM_MODELS.map(async (m) => {
      const fit = checkFit([await estimateModelMemory(m, 8192)], { freeBytes: freeGB * GiB, gpuLimitBytes: 16 * GiB });
      return { model: m.id, running: false, verdict: fitVerdict(fit), words: fitWords(fit), fit };
    }),
  );
}

describe('models panel: fit words', () => {
  it("shows each model's verdict and figures; a running model shows none", async () => {
    const { bridge, store } = renderApp(snapshot(), {}, <ModelsPanel />);
    bridge.modelFits = await fitsOn(3.9);
    await store.getState().actions.loadModels();
    fireEvent.click(within(screen.getByRole('region', { name: 'Models' })).getByRole('button', { name: /^Models/ }));
    await waitFor(() => expect(screen.getAllByTestId('model-fit')).toHaveLength(2));
    const lines = screen.getAllByTestId('model-fit').map((l) => [l.dataset.verdict, l.textContent]);
    expect(lines).toEqual([
      ['tight', "tightneeds 1.7 GiB; 3.9 GiB free, of which 2.0 GiB is kept free for macOS and other apps: 1.9 GiB usable; 16.0 GiB of the GPU's 16.0 GiB limit left; leaves 0.2 GiB"],
      ['does_not_fit', "does not fitneeds 4.3 GiB; 3.9 GiB free, of which 2.0 GiB is kept free for macOS and other apps: 1.9 GiB usable; 16.0 GiB of the GPU's 16.0 GiB limit left"],
    ]);

    // The 1B runs: its row says "running" and no fit line.
    bridge.modelFits = [{ model: 'sim/llama-3.2-1b', running: true, verdict: null, words: 'running', fit: null }, (await fitsOn(8))[1]!];
    bridge.push(snapshot({ instances: [instance({ model: 'sim/llama-3.2-1b' })] }));
    await waitFor(() => expect(screen.getAllByTestId('model-fit')).toHaveLength(1));
    expect(screen.getByTestId('model-fit').textContent).toBe("fitsneeds 4.3 GiB; 8.0 GiB free, of which 2.0 GiB is kept free for macOS and other apps: 6.0 GiB usable; 16.0 GiB of the GPU's 16.0 GiB limit left");
  });
});
