import { act, cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import {
  catalog,
  instance,
  mlxAvailable,
  mlxModel,
  mlxRuntime,
  mlxSetupFailed,
  mlxSetupRunning,
  mlxUnsupported,
  snapshot,
} from '../../../../test/support/renderer/fixtures';
import { renderApp } from '../../../../test/support/renderer/render-app';
import { ModelsPanel } from './models-panel';

afterEach(cleanup);

const panel = () => screen.getByRole('region', { name: 'Models' });
const toggle = () => within(panel()).getByRole('button', { name: /^Models/ });
const engine = () => screen.getByTestId('mlx-engine');
const setupButton = () => screen.queryByRole('button', { name: 'Set up MLX runtime' }) as HTMLButtonElement | null;

/** Renders the panel alone with a snapshot, opens it and waits for the catalog. */
async function openPanel(...args: Parameters<typeof renderApp>) {
  const rendered = renderApp(args[0], args[1], <ModelsPanel />);
  await waitFor(() => expect(rendered.store.getState().models.status).toBe('ready'));
  fireEvent.click(toggle());
  return rendered;
}

describe('models panel', () => {
  it('is collapsed at first, with the count and the MLX state in its header; opens and closes', async () => {
    renderApp(snapshot({ mlx: mlxRuntime() }), {}, <ModelsPanel />);
    await waitFor(() => expect(screen.getByTestId('models-summary').textContent).toBe('2 models · MLX not set up'));
    expect(toggle().getAttribute('aria-expanded')).toBe('false');
    expect(screen.queryByRole('list', { name: 'Model catalog' })).toBeNull();
    fireEvent.click(toggle());
    expect(toggle().getAttribute('aria-expanded')).toBe('true');
    expect(document.getElementById(toggle().getAttribute('aria-controls')!)?.hidden).toBe(false);
    expect(screen.getByRole('list', { name: 'Model catalog' })).toBeTruthy();
    fireEvent.click(toggle());
    expect(screen.queryByRole('list', { name: 'Model catalog' })).toBeNull();
  });

  it('lists the catalog with engine, memory in GB, "simulated" on sim models only, and which run', async () => {
    const { bridge } = renderApp();
    bridge.listModels.mockResolvedValue(catalog([mlxModel()]));
    act(() => bridge.push(snapshot({ mlx: mlxAvailable(1), instances: [instance()] })));
    fireEvent.click(toggle());
    await waitFor(() => expect(screen.getAllByTestId('model-row')).toHaveLength(3));
    const rows = screen.getAllByTestId('model-row');
    const cells = rows.map((r) => [
      r.querySelector('strong')?.textContent,
      within(r).getByTestId('model-engine').textContent,
      within(r).getByTestId('model-memory').textContent,
      within(r).queryByText('simulated') !== null,
      within(r).queryByText('running') !== null,
    ]);
    expect(cells).toEqual([
      ['Llama 3.2 1B (simulated)', 'sim', '1.4 GiB', true, true],
      ['Llama 3.2 3B (simulated)', 'sim', '3.4 GiB', true, false],
      ['Llama-3.2-3B-Instruct-4bit', 'MLX', '2.2 GiB', false, false],
    ]);
  });

  it("says each model's residency in the tray's words, with Load, Pin and Unload", async () => {
    const { bridge, push } = renderApp();
    const base = instance();
    const at = base.residency.lastUsedAt + 60_000;
    push(snapshot({ at, instances: [{ ...base, residency: { ...base.residency, idleSince: at - 60_000, unloadsAt: at + 4 * 60_000 } }] }));
    fireEvent.click(toggle());
    await waitFor(() => expect(screen.getAllByTestId('model-row')).toHaveLength(2));
    const words = () => screen.getAllByTestId('model-residency-words').map((w) => w.textContent);
    expect(words()).toEqual(['loaded · unloads in 4 min', 'unloaded']);
    const [loaded, unloaded] = screen.getAllByTestId('model-row');
    fireEvent.click(within(unloaded!).getByRole('button', { name: 'Load Llama 3.2 3B (simulated)' }));
    await waitFor(() => expect(bridge.createInstance).toHaveBeenCalledWith({ model: 'sim/llama-3.2-3b', instanceType: 'ring' }));
    fireEvent.click(within(loaded!).getByRole('checkbox', { name: 'Pin Llama 3.2 1B (simulated)' }));
    await waitFor(() => expect(bridge.setResidency).toHaveBeenCalledWith(base.id, { pin: true }));
    fireEvent.click(within(loaded!).getByRole('button', { name: 'Unload Llama 3.2 1B (simulated)' }));
    await waitFor(() => expect(bridge.unloadInstance).toHaveBeenCalledWith(base.id));
    // Pinned, then busy: Unload waits while requests are queued or in flight.
    push(snapshot({ at, instances: [{ ...base, residency: { ...base.residency, pinned: true, unloadsAt: null } }] }));
    expect(words()[0]).toBe('pinned');
    push(
      snapshot({
        at,
        instances: [
          {
            ...base,
            queue: {
              ...base.queue,
              requests: [
                { id: 'r', phase: 'decoding', ageMs: 5, promptTokens: 3, completionTokens: 1, decodeTokensPerSecond: null, itlP50Ms: null, itlP95Ms: null },
              ],
            },
            residency: { ...base.residency, idleSince: null, unloadsAt: null },
          },
        ],
      }),
    );
    expect(words()[0]).toBe('loaded · in use');
    expect((within(screen.getAllByTestId('model-row')[0]!).getByRole('button', { name: /^Unload/ }) as HTMLButtonElement).disabled).toBe(true);
  });

  it('MLX available: the python, the mlx-lm version and the number of local models; no setup button', async () => {
    await openPanel(snapshot({ mlx: mlxAvailable(2) }));
    expect(engine().dataset.state).toBe('available');
    expect(engine().textContent).toContain('available');
    expect(engine().textContent).toContain('mlx-lm 0.26.3');
    expect(screen.getByTestId('mlx-local-models').textContent).toBe('2 local models');
    expect(screen.getByTestId('mlx-python').textContent).toBe('/Users/me/Library/Application Support/exobar/mlx-venv/bin/python');
    // Which Python was chosen, and why (the app started from Finder does not see the terminal's PATH).
    expect(screen.getByTestId('mlx-choice').textContent).toBe('chosen as the venv "Set up MLX runtime" made');
    expect(setupButton()).toBeNull();
    expect(screen.getByTestId('models-summary').textContent).toContain('MLX available');
  });

  it('MLX available without local models: says where models are looked for', async () => {
    await openPanel(snapshot({ mlx: mlxAvailable(0) }));
    expect(screen.getByTestId('mlx-local-models').textContent).toBe('0 local models');
    expect(engine().textContent).toContain('~/.exo/models');
  });

  it('while the core is still looking for MLX: says so, not "unavailable", and offers no setup yet', async () => {
    await openPanel(snapshot({ mlx: mlxRuntime({ checking: true, reason: 'not checked yet' }) }));
    expect(engine().dataset.state).toBe('checking');
    expect(engine().textContent).toContain('looking for the MLX runtime');
    expect(screen.queryByTestId('mlx-reason')).toBeNull();
    expect(setupButton()).toBeNull();
    expect(screen.getByTestId('models-summary').textContent).toContain('looking for MLX');
  });

  it('MLX unavailable where it cannot run: the reason, and no setup button', async () => {
    await openPanel(snapshot({ mlx: mlxUnsupported() }));
    expect(engine().dataset.state).toBe('unavailable');
    expect(screen.getByTestId('mlx-reason').textContent).toBe('MLX runs only on macOS with Apple silicon; this is linux/x64. Simulated models still work.');
    expect(setupButton()).toBeNull();
    expect(screen.getByTestId('models-summary').textContent).toContain('MLX unavailable here');
  });

  it('MLX unavailable on Apple silicon: the reason and "Set up MLX runtime", which starts the setup once', async () => {
    const { bridge } = await openPanel(snapshot({ mlx: mlxRuntime() }));
    expect(screen.getByTestId('mlx-reason').textContent).toContain('No Python with mlx-lm found');
    let started!: () => void;
    bridge.setupMlxRuntime.mockReturnValueOnce(new Promise<void>((resolve) => (started = resolve)));
    fireEvent.click(setupButton()!);
    expect(bridge.setupMlxRuntime).toHaveBeenCalledOnce();
    const starting = screen.getByRole('button', { name: 'Starting…' }) as HTMLButtonElement;
    expect(starting.disabled).toBe(true);
    fireEvent.click(starting);
    expect(bridge.setupMlxRuntime).toHaveBeenCalledOnce();
    await act(async () => started());
    expect(setupButton()?.disabled).toBe(false);
  });

  it("while the setup runs: its step, message and pip's last lines; no setup button", async () => {
    await openPanel(snapshot({ mlx: mlxSetupRunning() }));
    expect(engine().dataset.state).toBe('setting-up');
    const setup = screen.getByTestId('mlx-setup');
    expect(setup.textContent).toContain('Installing mlx-lm…');
    expect(setup.textContent).toContain('step 5 of 6');
    expect(screen.getByRole('progressbar', { name: 'MLX runtime setup' }).getAttribute('aria-valuenow')).toBe('4');
    expect(screen.getByTestId('mlx-setup-message').textContent).toBe('Downloading mlx-0.29.1-cp312-cp312-macosx_15_0_arm64.whl (30.2 MB)');
    expect(screen.getByTestId('mlx-output-tail').textContent).toBe(
      'Collecting mlx-lm>=0.26\nCollecting mlx>=0.29\nDownloading mlx-0.29.1-cp312-cp312-macosx_15_0_arm64.whl (30.2 MB)',
    );
    expect(setupButton()).toBeNull();
    expect(screen.queryByTestId('mlx-reason')).toBeNull();
    expect(screen.getByTestId('models-summary').textContent).toContain('MLX setting up…');
  });

  it("a failed setup: the error, pip's output and a retry that starts it again", async () => {
    const { bridge } = await openPanel(snapshot({ mlx: mlxSetupFailed() }));
    expect(screen.getByRole('alert').textContent).toBe(
      'Setup failed while installing mlx-lm: /data/mlx-venv/bin/python -m pip install mlx-lm>=0.26 failed (exit 1). Is this Python 3.10 or later on Apple silicon?',
    );
    expect(screen.getByTestId('mlx-output-tail').textContent).toContain('ERROR: No matching distribution found for mlx>=0.29');
    expect(setupButton()).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Retry setup' }));
    expect(bridge.setupMlxRuntime).toHaveBeenCalledOnce();
    await act(async () => {});
  });

  it('a refused setup start becomes an error notice', async () => {
    const { bridge, store } = await openPanel(snapshot({ mlx: mlxRuntime() }));
    bridge.setupMlxRuntime.mockRejectedValueOnce(new Error('MLX runs only on macOS on Apple silicon; the sim engine serves the sim models here'));
    await act(async () => fireEvent.click(setupButton()!));
    expect(store.getState().notice).toMatchObject({ kind: 'error', message: expect.stringContaining('Apple silicon') });
  });

  it('reloads the catalog when the setup finishes and local models appear', async () => {
    const { bridge, push } = await openPanel(snapshot({ mlx: mlxSetupRunning() }));
    expect(screen.getAllByTestId('model-row')).toHaveLength(2);
    bridge.listModels.mockResolvedValue(catalog([mlxModel()]));
    push(snapshot({ seq: 2, mlx: { ...mlxAvailable(1), setup: { state: 'done', step: 'done', message: 'MLX runtime ready', outputTail: [], error: null } } }));
    await waitFor(() => expect(screen.getAllByTestId('model-row')).toHaveLength(3));
    expect(bridge.listModels).toHaveBeenCalledTimes(2);
    expect(engine().dataset.state).toBe('available');
  });

  it('"check again" looks for the runtime again and reloads the catalog', async () => {
    const { bridge } = await openPanel(snapshot({ mlx: mlxRuntime() }));
    await act(async () => fireEvent.click(screen.getByRole('button', { name: 'check again' })));
    expect(bridge.refreshMlxRuntime).toHaveBeenCalledOnce();
    expect(bridge.listModels).toHaveBeenCalledTimes(2);
  });

  it('before the core has looked for MLX, and when the list cannot be fetched', async () => {
    const { bridge } = renderApp(undefined, {}, <ModelsPanel />);
    bridge.listModels.mockRejectedValueOnce(new Error('The server answered 500'));
    act(() => bridge.push(snapshot()));
    fireEvent.click(toggle());
    await waitFor(() => expect(screen.getByRole('alert').textContent).toBe('Could not get the model list: The server answered 500'));
    expect(engine().dataset.state).toBe('unknown');
    expect(engine().textContent).toContain('not checked yet');
    expect(screen.getByTestId('models-summary').textContent).toBe('MLX not checked yet');
  });
});
