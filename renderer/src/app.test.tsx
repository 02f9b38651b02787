import { act, cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import {
  fastSynchOn,
  instance,
  mlxAvailable,
  mlxRuntime,
  prefillingInstance,
  ringFastSynchWarning,
  safePairPlan,
  snapshot,
  withStatus,
} from '../../test/support/renderer/fixtures';
import { noTokenMessage, tokenRefusedMessage, unreachableMessage } from './bridge/connection-words';
import { renderApp } from '../../test/support/renderer/render-app';

afterEach(cleanup);

describe('alerts the Mac app could not notify', () => {
  it('shows each as a banner until dismissed; pushing the list again does not bring a dismissed one back', async () => {
    const { bridge } = renderApp(snapshot());
    const failed = { id: 1, title: 'A failed', body: 'Metal out of memory — exited (exit code 1)', at: 1 };
    const port = { id: 2, title: 'Port 52416 is in use', body: 'The local API listens on http://127.0.0.1:60001 instead.', at: 2 };
    act(() => bridge.alerts([failed, port]));
    expect(screen.getAllByTestId('app-alert').map((a) => a.textContent)).toEqual([
      expect.stringContaining('A failed Metal out of memory'),
      expect.stringContaining('Port 52416 is in use'),
    ]);
    fireEvent.click(screen.getByRole('button', { name: 'Dismiss A failed' }));
    expect(screen.getAllByTestId('app-alert').map((a) => a.textContent)).toEqual([expect.stringContaining('Port 52416 is in use')]);
    act(() => bridge.alerts([failed, port]));
    expect(screen.getAllByTestId('app-alert')).toHaveLength(1);
    await act(async () => {});
  });
});

describe('app states', () => {
  it('shows "connecting" until the first snapshot arrives', async () => {
    const { push } = renderApp();
    expect(screen.getByTestId('loading-state').textContent).toContain('Connecting to exobar');
    expect(screen.getByTestId('app-header').getAttribute('data-level')).toBe('connecting');
    push(snapshot({ instances: [instance()] }));
    expect(screen.queryByTestId('loading-state')).toBeNull();
    await act(async () => {});
  });

  it('says "Token refused" (not "cannot reach") when the server refused the token, with what to do', () => {
    const { bridge } = renderApp();
    act(() => bridge.connection(tokenRefusedMessage('http://127.0.0.1:52416', '/Users/op/.exobar/token'), 'token_refused'));
    const error = screen.getByTestId('connection-error');
    expect(error.querySelector('h2')?.textContent).toBe('Token refused');
    expect(error.textContent).toContain('The token is in /Users/op/.exobar/token');
    expect(error.textContent).toContain('http://127.0.0.1:52416/#token=');
    expect(error.textContent).not.toContain('Cannot reach');
    expect(screen.queryByTestId('loading-state')).toBeNull();
    expect(screen.getByTestId('app-header').textContent).toContain('Token refused');
    // Nothing it cannot know: no snapshot came, so no counts and no version.
    expect(screen.queryByTestId('running-count')).toBeNull();
    expect(screen.queryByTestId('warning-count')).toBeNull();
    expect(screen.queryByTestId('version')).toBeNull();
    expect(document.body.textContent).not.toMatch(/0 models running|0 warnings|v0\.0\.0/);
  });

  it('says "Cannot reach exobar" when nothing answers, and "No access token" without one', () => {
    const { bridge } = renderApp();
    act(() => bridge.connection(unreachableMessage('http://127.0.0.1:52416', 'fetch failed'), 'unreachable'));
    expect(screen.getByTestId('connection-error').querySelector('h2')?.textContent).toBe('Cannot reach exobar');
    expect(screen.getByTestId('app-header').textContent).toContain('Cannot reach exobar');
    act(() => bridge.connection(noTokenMessage('http://127.0.0.1:52416', '/data/token'), 'no_token'));
    expect(screen.getByTestId('connection-error').querySelector('h2')?.textContent).toBe('No access token');
    expect(screen.getByTestId('connection-error').textContent).toContain('The token is in /data/token');
    expect(document.body.textContent).not.toMatch(/models? running|warnings?\b|v0\.0\.0/);
  });

  it('keeps the last state on screen when the connection drops, and clears the error when it returns', async () => {
    const { bridge, push } = renderApp(snapshot({ instances: [instance()] }));
    act(() => bridge.connection('Lost connection to exobar serve: fetch failed. Retrying in 2 s'));
    expect(screen.getByTestId('connection-error').textContent).toContain('showing the last known state');
    expect(screen.getByTestId('instance-card')).toBeTruthy();
    push(snapshot({ seq: 2, instances: [instance()] }));
    expect(screen.queryByTestId('connection-error')).toBeNull();
    expect(screen.getByTestId('app-header').textContent).toContain('All good');
    await act(async () => {});
  });

  it('shows the empty state and the safe launch plan when no model runs', async () => {
    const { bridge } = renderApp(snapshot());
    expect(screen.getByTestId('empty-state').textContent).toContain('No models running — launch the safe pair');
    await waitFor(() => expect(screen.getAllByTestId('plan-row')).toHaveLength(2));
    const panel = screen.getByRole('region', { name: 'Safe launch' });
    expect(panel.textContent).toContain('Llama 3.2 1B (simulated)');
    expect(panel.textContent).toContain('fast synch off, the rule for ring instances');
    expect(screen.getByTestId('plan-memory').textContent).toContain('Memory: needs 4.8 GiB; 20.0 GiB free, of which 2.0 GiB is kept free for macOS and other apps: 18.0 GiB usable');
    const launch = within(panel).getByRole('button', { name: 'Launch safe pair' }) as HTMLButtonElement;
    expect(launch.disabled).toBe(false);
    fireEvent.click(launch);
    expect(bridge.launchSafePair).toHaveBeenCalledOnce();
    await act(async () => {});
  });

  it('disables the launch and lists the blockers when the plan cannot run', async () => {
    const { bridge } = renderApp();
    bridge.getSafePairPlan.mockResolvedValue(safePairPlan({ canRun: false, blockers: ['Needs 4.8 GiB, 2.0 GiB free'] }));
    act(() => bridge.push(snapshot()));
    await waitFor(() => expect(screen.getByRole('list', { name: 'Blockers' }).textContent).toContain('Needs 4.8 GiB, 2.0 GiB free'));
    expect((screen.getByRole('button', { name: 'Launch safe pair' }) as HTMLButtonElement).disabled).toBe(true);
  });

  it('shows the launch progress while it runs and the error when it fails', async () => {
    const { push } = renderApp(
      snapshot({
        launch: {
          state: 'running',
          step: 'Loading sim/llama-3.2-3b (12/28 layers)',
          models: ['sim/llama-3.2-1b', 'sim/llama-3.2-3b'],
          current: 1,
          error: null,
          startedAt: 0,
        },
      }),
    );
    expect(screen.getByTestId('launch-progress').textContent).toContain('Loading sim/llama-3.2-3b (12/28 layers)');
    expect(screen.getByTestId('launch-progress').textContent).toContain('2 of 2');
    expect((screen.getByRole('button', { name: 'Launching…' }) as HTMLButtonElement).disabled).toBe(true);
    push(snapshot({ seq: 2, launch: { state: 'failed', step: 'Loading', models: [], current: 0, error: 'Runner exited during load', startedAt: 0 } }));
    expect(screen.getByText(/Launch failed: Runner exited during load/)).toBeTruthy();
    expect(screen.getByTestId('app-header').textContent).toContain('Launch failed');
    await act(async () => {});
  });

  it('says nothing more is needed once both models run', async () => {
    const { bridge } = renderApp();
    const running = safePairPlan();
    bridge.getSafePairPlan.mockResolvedValue({
      ...running,
      models: running.models.map((m) => ({ ...m, alreadyRunning: true, state: 'serving' as const })),
      memory: { requiredBytes: 0, freeBytes: 20 * 1024 ** 3, headroomBytes: 2 * 1024 ** 3 },
    });
    act(() => bridge.push(snapshot({ instances: [instance()] })));
    await waitFor(() => expect(screen.getByTestId('plan-memory').textContent).toBe('Memory: nothing more to load (20.0 GiB free)'));
    expect((screen.getByRole('button', { name: 'Safe pair running' }) as HTMLButtonElement).disabled).toBe(true);
    expect(screen.getAllByTestId('plan-state').map((b) => b.textContent)).toEqual(['serving', 'serving']);
  });

  it('marks a model the plan reuses while it still loads as loading, never running', async () => {
    const { bridge } = renderApp();
    const plan = safePairPlan();
    bridge.getSafePairPlan.mockResolvedValue({
      ...plan,
      models: [
        { ...plan.models[0]!, alreadyRunning: true, state: 'serving' },
        { ...plan.models[1]!, alreadyRunning: true, state: 'loading' },
      ],
    });
    act(() => bridge.push(snapshot({ instances: [instance()] })));
    await waitFor(() => expect(screen.getAllByTestId('plan-state').map((b) => b.textContent)).toEqual(['serving', 'loading']));
    expect(screen.getByRole('region', { name: 'Safe launch' }).textContent).not.toContain('running');
    expect((screen.getByRole('button', { name: 'Safe pair loading…' }) as HTMLButtonElement).disabled).toBe(true);
  });

  it('says the pair failed, naming the model, when a model it reuses has failed: never "loading"', async () => {
    const { bridge } = renderApp();
    const plan = safePairPlan();
    bridge.getSafePairPlan.mockResolvedValue({
      ...plan,
      models: [
        { ...plan.models[0]!, alreadyRunning: true, state: 'serving' },
        { ...plan.models[1]!, alreadyRunning: true, state: 'failed' },
      ],
    });
    act(() => bridge.push(snapshot({ instances: [instance()] })));
    await waitFor(() => expect(screen.getAllByTestId('plan-state').map((b) => b.textContent)).toEqual(['serving', 'failed']));
    expect((screen.getByRole('button', { name: 'Safe pair failed: Llama 3.2 3B (simulated)' }) as HTMLButtonElement).disabled).toBe(true);
    expect(screen.getByRole('region', { name: 'Safe launch' }).textContent).not.toContain('loading');
  });

  it('shows a failed plan request in words', async () => {
    const { bridge } = renderApp();
    bridge.getSafePairPlan.mockRejectedValue(new Error('The server answered 500'));
    act(() => bridge.push(snapshot()));
    await waitFor(() => expect(screen.getByText('Could not get the plan: The server answered 500')).toBeTruthy());
  });
});

describe('header', () => {
  it('says a model is loading (not "All good") while one loads, with the running and warning counts', async () => {
    renderApp(snapshot({ instances: [instance(), prefillingInstance(), withStatus({ kind: 'RunnerLoading', layersLoaded: 1, totalLayers: 2 }, { id: 'x' })] }));
    const header = screen.getByTestId('app-header');
    expect(header.textContent).toContain('1 model loading');
    expect(header.textContent).not.toContain('All good');
    expect(header.dataset.level).toBe('loading');
    expect(screen.getByTestId('running-count').textContent).toBe('2 models running');
    expect(screen.getByTestId('warning-count').textContent).toBe('0 warnings');
    await act(async () => {});
  });
});

describe('shared-GPU warning banner', () => {
  it('explains the risk and relaunches the affected runners with fast synch off', async () => {
    const warning = ringFastSynchWarning();
    const { bridge } = renderApp(snapshot({ instances: [fastSynchOn(instance()), fastSynchOn(prefillingInstance())], warnings: [warning] }));
    const banner = screen.getByTestId('warning-banner');
    expect(banner.textContent).toContain('2 ring models share the GPU');
    expect(banner.textContent).toContain('spin forever');
    expect(banner.textContent).toContain('Relaunch the affected runners with fast synch off');
    expect(screen.getByTestId('app-header').getAttribute('data-level')).toBe('warning');
    expect(screen.getByTestId('warning-count').textContent).toBe('1 warning');
    const fix = within(banner).getByRole('button', { name: 'Relaunch 2 runners with fast synch off' });
    fireEvent.click(fix);
    await waitFor(() => expect(bridge.updateInstance).toHaveBeenCalledTimes(2));
    expect(bridge.updateInstance).toHaveBeenCalledWith('inst-1b', { fastSynch: 'off', mode: 'drain' });
    expect(bridge.updateInstance).toHaveBeenCalledWith('inst-3b', { fastSynch: 'off', mode: 'drain' });
    await waitFor(() => expect(screen.getByTestId('notice').textContent).toContain('with fast synch off'));
  });

  it('offers the fast-synch-off fix for two JACCL models with fast synch on, beside the advice', () => {
    renderApp(
      snapshot({
        instances: [instance({ instanceType: 'jaccl' })],
        warnings: [
          {
            code: 'two_jaccl_shared_gpu',
            instanceIds: ['inst-1b'],
            title: 'Fast synch is on for Llama 3.2 1B while 2 JACCL models share one GPU',
            risk: 'untested',
            fix: 'Run one JACCL model per Mac, or relaunch the JACCL runners with fast synch off',
          },
        ],
      }),
    );
    const banner = screen.getByTestId('warning-banner');
    expect(banner.textContent).toContain('Run one JACCL model per Mac');
    expect(within(banner).getByRole('button').textContent).toMatch(/fast synch off/i);
  });
});

describe('footer actions', () => {
  it('copies the API base URL, exports diagnostics and stops all', async () => {
    const { bridge } = renderApp(snapshot({ instances: [instance()] }));
    expect(screen.getByTestId('api-url').textContent).toBe('http://127.0.0.1:52416/v1');
    fireEvent.click(screen.getByRole('button', { name: 'Copy API URL' }));
    await waitFor(() => expect(screen.getByTestId('notice').textContent).toContain('Copied http://127.0.0.1:52416/v1'));
    fireEvent.click(screen.getByRole('button', { name: 'Export diagnostics' }));
    await waitFor(() => expect(bridge.exportDiagnostics).toHaveBeenCalledOnce());
    fireEvent.click(screen.getByRole('button', { name: 'Stop all' }));
    await waitFor(() => expect(bridge.stopAll).toHaveBeenCalledOnce());
  });

  it('shows an API error message from a failed action and lets the user dismiss it', async () => {
    const { bridge } = renderApp(snapshot({ instances: [instance()] }));
    bridge.exportDiagnostics.mockRejectedValueOnce(new Error('Diagnostics are not available yet'));
    fireEvent.click(screen.getByRole('button', { name: 'Export diagnostics' }));
    const notice = await screen.findByRole('alert');
    expect(notice.textContent).toContain('Diagnostics are not available yet');
    fireEvent.click(within(notice).getByRole('button', { name: 'Dismiss' }));
    expect(screen.queryByTestId('notice')).toBeNull();
  });

  it('says when no local API runs', async () => {
    renderApp(snapshot({ apiBaseUrl: null }));
    expect(screen.getByTestId('api-url').textContent).toBe('Local API not running');
    expect((screen.getByRole('button', { name: 'Copy API URL' }) as HTMLButtonElement).disabled).toBe(true);
    await act(async () => {});
  });
});

describe('safe launch preview', () => {
  it('reloads the plan when a running model changes its fast-synch value, and not on other updates', async () => {
    const off = instance();
    const { bridge, push } = renderApp(snapshot({ instances: [off] }));
    await waitFor(() => expect(bridge.getSafePairPlan).toHaveBeenCalledTimes(1));
    push(snapshot({ seq: 2, instances: [{ ...off, tokensPerSecond: 42 }] }));
    await act(async () => {});
    expect(bridge.getSafePairPlan).toHaveBeenCalledTimes(1);
    push(snapshot({ seq: 3, instances: [{ ...off, fastSynch: { ...off.fastSynch, override: 'on', enabled: true, reason: 'forced on by user' } }] }));
    await waitFor(() => expect(bridge.getSafePairPlan).toHaveBeenCalledTimes(2));
  });
});

describe('models panel in the page', () => {
  it('sits below the safe launch with and without running models', async () => {
    const { push } = renderApp(snapshot());
    const order = () =>
      screen
        .getAllByRole('region')
        .map((r) => r.getAttribute('aria-label'))
        .filter((l) => l === 'Safe launch' || l === 'Models');
    expect(order()).toEqual(['Safe launch', 'Models']);
    push(snapshot({ seq: 2, instances: [instance()] }));
    expect(order()).toEqual(['Safe launch', 'Models']);
    await act(async () => {});
  });

  it('reloads the safe pair plan and the catalog when the MLX runtime becomes available with local models', async () => {
    const { bridge, push } = renderApp(snapshot({ mlx: mlxRuntime() }));
    await waitFor(() => expect(bridge.getSafePairPlan).toHaveBeenCalledTimes(1));
    expect(bridge.listModels).toHaveBeenCalledTimes(1);
    push(snapshot({ seq: 2, mlx: mlxAvailable(2) }));
    await waitFor(() => expect(bridge.getSafePairPlan).toHaveBeenCalledTimes(2));
    expect(bridge.listModels).toHaveBeenCalledTimes(2);
    // Progress alone (same availability, same models) reloads nothing.
    push(snapshot({ seq: 3, mlx: mlxAvailable(2) }));
    await act(async () => {});
    expect(bridge.getSafePairPlan).toHaveBeenCalledTimes(2);
    expect(bridge.listModels).toHaveBeenCalledTimes(2);
  });
});
