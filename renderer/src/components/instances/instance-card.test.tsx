import { act, cleanup, fireEvent, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { instance, instanceWithTtft, prefillingInstance, snapshot, withStatus } from '../../../../test/support/renderer/fixtures';
import { renderApp } from '../../../../test/support/renderer/render-app';

afterEach(cleanup);

const card = (name: RegExp | string) => screen.getByRole('region', { name });

describe('instance card', () => {
  it("shows a loading runner in plain words (exo's name in the tooltip) and a layer progress bar", () => {
    renderApp(snapshot({ instances: [withStatus({ kind: 'RunnerLoading', layersLoaded: 12, totalLayers: 28 })] }));
    const c = card('Llama 3.2 1B (simulated)');
    const status = within(c).getByTestId('runner-status');
    expect(status.textContent).toBe('Loading 12 of 28 layers');
    expect(status.getAttribute('title')).toBe('exo status: RunnerLoading');
    const bar = within(c).getByRole('progressbar', { name: /Loading/ });
    expect(bar.getAttribute('aria-valuenow')).toBe('12');
    expect(bar.getAttribute('aria-valuemax')).toBe('28');
  });

  it('shows a ready runner: type, simulated engine, fast synch with its reason, n/a times', () => {
    renderApp(snapshot({ instances: [instance()] }));
    const c = card('Llama 3.2 1B (simulated)');
    expect(within(c).getByTestId('runner-status').textContent).toBe('Ready');
    expect(within(c).getByTestId('runner-status').getAttribute('title')).toBe('exo status: RunnerReady');
    expect(within(c).getByText('ring').getAttribute('title')).toMatch(/^ring: exo's instance type/);
    expect(within(c).getByText('TTFT').getAttribute('title')).toMatch(/^TTFT, time to first token/);
    expect(within(c).getByText('Fast synch').getAttribute('title')).toMatch(/MLX_METAL_FAST_SYNCH/);
    expect(within(c).getByText('simulated')).toBeTruthy();
    expect(within(c).getByTestId('fast-synch').textContent).toBe('off');
    expect(c.textContent).toContain('ring instance');
    expect(within(c).getByTestId('ttft-latest').textContent).toBe('n/a');
    expect(within(c).getByTestId('ttft-p50').textContent).toBe('n/a');
    expect(within(c).getByTestId('ttft-p95').textContent).toBe('n/a');
    expect(within(c).getByTestId('tokens-per-second').textContent).toBe('n/a');
    expect(within(c).getByTestId('ttft-chart-empty')).toBeTruthy();
    expect(within(c).queryByTestId('prefill')).toBeNull();
    expect(c.textContent).toContain('No requests');
  });

  it('labels an MLX engine as such, not as simulated', () => {
    renderApp(snapshot({ instances: [instance({ engine: 'mlx', simulated: false, modelName: 'Llama 3B' })] }));
    const c = card('Llama 3B');
    expect(within(c).queryByText('simulated')).toBeNull();
    expect(within(c).getByText('MLX')).toBeTruthy();
  });

  it("shows the runner's schedule, a sim's timing profile, and its prompt cache's size, cap and hit rate, or why the model has none", () => {
    const cache = { capBytes: 1024 ** 3, supported: true, reason: null, entries: 2, bytes: 256 * 1024 ** 2, hits: 3, misses: 1, hitTokens: 900 };
    const { push } = renderApp(snapshot({ instances: [instance({ runnerEngine: { schedule: 'interleaved', simProfile: null, promptCache: cache } })] }));
    const c = () => card('Llama 3.2 1B (simulated)');
    expect(within(c()).getByText('interleaved').getAttribute('title')).toMatch(/^runner.schedule interleaved/);
    expect(within(c()).getByTestId('prompt-cache').textContent).toBe('prompt cache 0.3 GiB / 1.0 GiB, 75% hits');
    const refused = { ...cache, supported: false, reason: 'Llama 4 (chunked attention): its ChunkedKVCache cannot be cached' };
    push(snapshot({ seq: 2, instances: [instance({ runnerEngine: { schedule: 'exo', simProfile: null, promptCache: refused } })] }));
    expect(within(c()).getByText('exo')).toBeTruthy();
    expect(within(c()).getByTestId('prompt-cache').textContent).toBe('no prompt cache: Llama 4 (chunked attention): its ChunkedKVCache cannot be cached');
    push(snapshot({ seq: 3, instances: [instance({ runnerEngine: { schedule: 'interleaved', simProfile: 'cpu-tiny', promptCache: { ...cache, capBytes: 0 } } })] }));
    expect(within(c()).getByTestId('prompt-cache').textContent).toBe('prompt cache off');
    // The sim's calibrated timings, when the setting chose them; nothing when it did not.
    expect(within(c()).getByTestId('sim-profile').textContent).toBe('sim profile cpu-tiny');
    expect(within(c()).getByTestId('sim-profile').getAttribute('title')).toMatch(/^runner.simProfile/);
    push(snapshot({ seq: 4, instances: [instance({ runnerEngine: { schedule: 'interleaved', simProfile: null, promptCache: cache } })] }));
    expect(within(c()).queryByTestId('sim-profile')).toBeNull();
  });

  it('says when the sharing policy paces the prefill, and for whom; nothing when it does not', () => {
    const paced = prefillingInstance();
    const { push } = renderApp(
      snapshot({
        instances: [{ ...paced, pacing: { since: Date.now() - 1000, neighbours: ['Llama 3.2 1B (simulated)'], chunkTokens: 256, pauseMs: 18 } }],
      }),
    );
    const row = within(card(paced.modelName)).getByTestId('pacing');
    expect(row.textContent).toBe('pacedPrefill paced while Llama 3.2 1B (simulated) streams: chunks of 256 tokens, 18 ms pause after each');
    // With the figure that engaged it (the adaptive policy): the stream's live ITL over its solo ITL.
    const trigger = { neighbour: 'Llama 3.2 1B (simulated)', itlMs: 21.6, soloItlMs: 12, ratio: 1.8 };
    push(
      snapshot({
        seq: 2,
        instances: [{ ...paced, pacing: { since: Date.now() - 1000, neighbours: [trigger.neighbour], chunkTokens: 256, pauseMs: 18, trigger } }],
      }),
    );
    expect(within(card(paced.modelName)).getByTestId('pacing').textContent).toBe(
      "pacedPrefill paced while Llama 3.2 1B (simulated) streams (Llama 3.2 1B (simulated)'s ITL 21.6 ms, 1.80× its solo 12 ms): chunks of 256 tokens, 18 ms pause after each",
    );
    push(snapshot({ seq: 3, instances: [{ ...paced, pacing: null }] }));
    expect(within(card(paced.modelName)).queryByTestId('pacing')).toBeNull();
  });

  it('says when pacing waits for a baseline for this model, and nothing once it has one', () => {
    const base = instance({ engine: 'mlx', simulated: false, modelName: 'Some MLX model' });
    const { push } = renderApp(snapshot({ instances: [{ ...base, pacingWaitingForBaseline: true }] }));
    expect(within(card('Some MLX model')).getByTestId('pacing-baseline').textContent).toMatch(
      /^Pacing waits for a baseline: this model's speed alone is not known yet/,
    );
    push(snapshot({ seq: 2, instances: [base] }));
    expect(within(card('Some MLX model')).queryByTestId('pacing-baseline')).toBeNull();
  });

  it('shows prefill progress with tokens, percent and ETA, and it advances with the next snapshot', () => {
    const { push } = renderApp(snapshot({ instances: [prefillingInstance()] }));
    const prefill = within(card('Llama 3.2 3B (simulated)')).getByTestId('prefill');
    expect(prefill.textContent).toContain('12,288 / 30,000 tokens · 41%');
    expect(prefill.textContent).toContain('ETA 11.2 s');
    const next = prefillingInstance();
    next.prefill = { requestId: 'chatcmpl-prefill-00002', processedTokens: 24_576, totalTokens: 30_000, etaMs: 3_400 };
    push(snapshot({ seq: 2, instances: [next] }));
    expect(prefill.textContent).toContain('24,576 / 30,000 tokens · 82%');
    expect(prefill.textContent).toContain('ETA 3.40 s');
    expect(within(prefill).getByRole('progressbar').getAttribute('aria-valuenow')).toBe('24576');
  });

  it('shows ETA n/a before the first prefill chunk', () => {
    const i = prefillingInstance();
    i.prefill = { requestId: 'chatcmpl-prefill-00002', processedTokens: 0, totalTokens: 30_000, etaMs: null };
    renderApp(snapshot({ instances: [i] }));
    expect(screen.getByTestId('prefill').textContent).toContain('ETA n/a');
  });

  it('lists every request with its phase in words and its age', () => {
    renderApp(snapshot({ instances: [prefillingInstance()] }));
    const rows = screen.getAllByTestId('queue-row');
    expect(rows.map((r) => r.getAttribute('data-phase'))).toEqual(['decoding', 'prefilling', 'awaiting_ack', 'queued', 'cancelling']);
    const text = rows.map((r) => r.textContent ?? '');
    expect(text[0]).toContain('Decoding');
    expect(text[0]).toContain('57 tok');
    expect(text[0]).toContain('9 s');
    expect(text[1]).toContain('Prefilling');
    expect(text[2]).toContain('Waiting for the runner');
    expect(text[2]).not.toContain('acknowledg');
    expect(text[3]).toContain('Queued');
    expect(text[3]).toContain('1 s');
    expect(text[4]).toContain('Cancelling');
    const count = within(card('Llama 3.2 3B (simulated)')).getByTestId('queue-count');
    expect(count.textContent).toBe('5 / 64');
    expect(count.getAttribute('title')).toBe(
      'Requests this model holds: waiting in the queue or running on the runner. At 64, a new request is refused with 429 (queue_full) until one finishes.',
    );
  });

  it('cancels a request from its row, and disables the button of one already cancelling', () => {
    const { bridge } = renderApp(snapshot({ instances: [prefillingInstance()] }));
    const cancelQueued = screen.getByRole('button', { name: 'Cancel request chatcmpl-queued-000004' }) as HTMLButtonElement;
    fireEvent.click(cancelQueued);
    expect(bridge.cancelRequest).toHaveBeenCalledWith('chatcmpl-queued-000004');
    const cancelCancelling = screen.getByRole('button', { name: 'Cancel request chatcmpl-cancel-000005' }) as HTMLButtonElement;
    expect(cancelCancelling.disabled).toBe(true);
  });

  it('shows pending cancellations as held or sent, with their age', () => {
    renderApp(snapshot({ instances: [prefillingInstance()] }));
    const rows = screen.getAllByTestId('pending-cancel');
    expect(rows.map((r) => r.getAttribute('data-state'))).toEqual(['held', 'sent']);
    expect(rows[0]?.textContent).toContain('sent once the runner takes the request');
    expect(rows[0]?.textContent).not.toContain('acknowledg');
    expect(rows[0]?.textContent).toContain('2 s');
    expect(rows[1]?.textContent).toContain('sent, waiting for the runner to stop');
    expect(rows[1]?.textContent).toContain('0 s');
  });

  it('hides the pending-cancellation list when there is none', () => {
    renderApp(snapshot({ instances: [instance()] }));
    expect(screen.queryByText('Pending cancellations')).toBeNull();
  });

  it("puts the model's load first in the latest TTFT's split when the request waited for it", () => {
    const base = instanceWithTtft(1);
    const latest = { ...base.ttft.latest!, loadMs: 4190, totalMs: base.ttft.latest!.totalMs + 4190 };
    renderApp(snapshot({ instances: [{ ...base, ttft: { ...base.ttft, latest, samples: [latest] } }] }));
    const breakdown = within(card('Llama 3.2 1B (simulated)')).getByTestId('ttft-breakdown').textContent ?? '';
    expect(breakdown).toMatch(/^model load 4\.19 s.*wait/);
  });

  it('shows the time a request waited in the runner for its turn as its own part, not as prefill', () => {
    const base = instanceWithTtft(1);
    // The sixth of six short prompts: 1.9 s behind the other five, 40 ms of its own prefill.
    const latest = { ...base.ttft.latest!, runnerWaitMs: 1900, prefillMs: 40, totalMs: base.ttft.latest!.waitMs + 1900 + 40 + base.ttft.latest!.firstTokenMs };
    renderApp(snapshot({ instances: [{ ...base, ttft: { ...base.ttft, latest, samples: [latest] } }] }));
    const breakdown = within(card('Llama 3.2 1B (simulated)')).getByTestId('ttft-breakdown').textContent ?? '';
    expect(breakdown).toMatch(/wait .*waiting in the runner 1\.90 s.*prefill 40 ms/);
  });

  it('shows TTFT samples on the chart with p50/p95 and the latest split into wait, prefill and first token', () => {
    const { container } = renderApp(snapshot({ instances: [instanceWithTtft(5)] }));
    const c = card('Llama 3.2 1B (simulated)');
    // latest = sample 4: wait 24, prefill 190, first token 60 → 274 ms
    expect(within(c).getByTestId('ttft-latest').textContent).toBe('274 ms');
    expect(within(c).getByTestId('ttft-p50').textContent).toBe('260 ms');
    expect(within(c).getByTestId('ttft-p95').textContent).toBe('300 ms');
    const breakdown = within(c).getByTestId('ttft-breakdown').textContent ?? '';
    expect(breakdown).toContain('wait 24 ms');
    expect(breakdown).toContain('prefill 190 ms');
    expect(breakdown).toContain('first token 60 ms');
    expect(breakdown).not.toContain('model load');
    const chart = within(c).getByTestId('ttft-chart');
    expect(chart.getAttribute('data-samples')).toBe('5');
    expect(container.querySelector('.recharts-wrapper svg')).not.toBeNull();
    // The lines are named in the legend; their values are in the row above (ttft-p50, ttft-p95).
    expect(within(chart).getByTestId('ttft-legend').textContent).toMatch(/p50.*p95/);
    expect(within(c).getByTestId('tokens-per-second').textContent).toBe('42.5 tok/s');
  });

  it('shows a runner that needs attention with the supervisor’s exit message and what to do', () => {
    const failed = withStatus({ kind: 'RunnerFailed', errorMessage: 'Runner stopped answering' });
    failed.runner = {
      ...failed.runner,
      state: 'needs_attention',
      pid: null,
      restarts: 3,
      lastExit: { cause: 'stuck', exitCode: null, signal: 'SIGKILL', message: 'Runner stopped answering: no output for 30 s in prefill', at: 0 },
      attention: 'the GPU may be wedged',
    };
    renderApp(snapshot({ instances: [failed] }));
    const c = card('Llama 3.2 1B (simulated)');
    expect(within(c).getByTestId('runner-status').textContent).toBe('Failed: Runner stopped answering');
    const alert = within(c).getByRole('alert');
    expect(alert.textContent).toContain('Needs attention: Runner stopped answering: no output for 30 s in prefill');
    expect(alert.textContent).toContain('the GPU may be wedged');
    expect(c.textContent).toContain('3 restarts');
    expect(screen.getByTestId('app-header').getAttribute('data-level')).toBe('failed');
  });

  it('flags a runner whose reported fast synch differs from the policy', () => {
    const i = instance();
    i.fastSynch = { override: 'auto', enabled: false, reason: 'ring instance', reported: true };
    renderApp(snapshot({ instances: [i] }));
    expect(within(card('Llama 3.2 1B (simulated)')).getByRole('alert').textContent).toBe('runner reports on');
    expect(screen.getByTestId('app-header').getAttribute('data-level')).toBe('warning');
  });

  it('stops a model from its card', () => {
    const { bridge } = renderApp(snapshot({ instances: [instance()] }));
    fireEvent.click(screen.getByRole('button', { name: 'Stop Llama 3.2 1B (simulated)' }));
    expect(bridge.stopInstance).toHaveBeenCalledWith('inst-1b', undefined);
  });

  it('says a connecting runner is Starting', () => {
    renderApp(snapshot({ instances: [withStatus({ kind: 'RunnerConnecting' })] }));
    expect(screen.getByTestId('runner-status').textContent).toBe('Starting');
  });

  it('offers Retry only for a runner down for good (its typed state), and sends it', () => {
    const ready = instance();
    const failed = withStatus({ kind: 'RunnerFailed', errorMessage: 'model not found' });
    failed.runner = { ...failed.runner, state: 'failed', lastExit: { cause: 'startup_failed', exitCode: 1, signal: null, message: 'model not found', at: 0 } };
    // A runner restarting after a crash has a failed status too, but the supervisor brings it back.
    const restarting = withStatus({ kind: 'RunnerFailed', errorMessage: 'crashed' });
    restarting.runner = { ...restarting.runner, state: 'restarting', restartAt: Date.now() + 2000 };
    for (const [inst, offered] of [
      [ready, false],
      [restarting, false],
      [failed, true],
    ] as const) {
      cleanup();
      const { bridge } = renderApp(snapshot({ instances: [inst] }));
      const retry = screen.queryByRole('button', { name: 'Retry Llama 3.2 1B (simulated)' });
      expect(retry !== null, inst.runner.state).toBe(offered);
      if (retry) {
        expect(screen.getByTestId('runner-state').textContent).toBe('Failed: model not found');
        fireEvent.click(retry);
        expect(bridge.retryInstance).toHaveBeenCalledWith('inst-1b');
      }
    }
  });

  it('disables stop while the runner shuts down', async () => {
    renderApp(snapshot({ instances: [withStatus({ kind: 'RunnerShuttingDown' })] }));
    const stop = screen.getByRole('button', { name: 'Stop Llama 3.2 1B (simulated)' }) as HTMLButtonElement;
    expect(stop.disabled).toBe(true);
    await act(async () => {});
  });
});

describe('live ages', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('keep counting between snapshots, and restart from the next snapshot', () => {
    vi.useFakeTimers();
    const { push } = renderApp(snapshot({ instances: [prefillingInstance()] }));
    const queuedRow = () => screen.getAllByTestId('queue-row')[3]!;
    const heldRow = () => screen.getAllByTestId('pending-cancel')[0]!;
    expect(queuedRow().textContent).toContain('1 s');
    expect(heldRow().textContent).toContain('2 s');
    act(() => vi.advanceTimersByTime(5_000));
    // No snapshot for 5 s (a wedged runner sends nothing): the ages still grow.
    expect(queuedRow().textContent).toContain('6 s');
    expect(heldRow().textContent).toContain('7 s');
    push(snapshot({ seq: 2, instances: [prefillingInstance()] }));
    expect(queuedRow().textContent).toContain('1 s');
  });

  it('stop counting while disconnected', () => {
    vi.useFakeTimers();
    const { bridge } = renderApp(snapshot({ instances: [prefillingInstance()] }));
    act(() => bridge.connection('Lost connection'));
    act(() => vi.advanceTimersByTime(5_000));
    expect(screen.getAllByTestId('queue-row')[3]!.textContent).toContain('1 s');
  });
});

describe('wide layout', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it("puts the cards in one grid, and the TTFT chart takes its card's measured width", () => {
    const observed: Element[] = [];
    vi.stubGlobal(
      'ResizeObserver',
      class {
        observe(element: Element) {
          observed.push(element);
        }
        disconnect() {}
      },
    );
    vi.spyOn(HTMLElement.prototype, 'getBoundingClientRect').mockReturnValue({ width: 612.6 } as DOMRect);
    const { container } = renderApp(snapshot({ instances: [instanceWithTtft(5), prefillingInstance()] }));
    const grid = screen.getByTestId('instance-grid');
    expect(within(grid).getAllByTestId('instance-card')).toHaveLength(2);
    expect(observed.length).toBeGreaterThanOrEqual(2);
    const svg = container.querySelector('.recharts-wrapper svg');
    expect(svg?.getAttribute('width')).toBe('612');
  });
});
