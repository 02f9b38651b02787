import { describe, expect, it } from 'vitest';
import { instance, snapshot, ttftSample, warning } from '../../test/support/electron/snapshot-fixtures';
import { mappedExoSnapshot } from '../../test/support/fake-exo';
import { EXO_STATES } from '../../test/support/exo-process-fixture';
import { trayViewOf } from './tray-state';

describe('tray state', () => {
  it('is idle with no instances, with an empty title', () => {
    const view = trayViewOf(snapshot());
    expect(view).toMatchObject({ state: 'idle', title: '' });
    expect(view.tooltip).toContain('no models running');
  });

  it('is idle while the only runner is still loading, and the tooltip says it loads (not "serving")', () => {
    const view = trayViewOf(snapshot({ instances: [instance('a', { status: { kind: 'RunnerLoading', layersLoaded: 3, totalLayers: 16 } })] }));
    expect(view.state).toBe('idle');
    expect(view.title).toBe('0');
    expect(view.tooltip).toContain('exobar: 1 model: 1 loading');
    expect(view.tooltip).toContain('Model a: Loading 3 of 16 layers');
    expect(view.tooltip).not.toContain('serving');
  });

  it('is serving when a runner is ready, titled with models serving and the latest TTFT', () => {
    const a = instance('a', { ttft: { samples: [], p50Ms: null, p95Ms: null, latest: ttftSample(230, 5_000) } });
    const b = instance('b', { status: { kind: 'RunnerRunning' }, ttft: { samples: [], p50Ms: null, p95Ms: null, latest: ttftSample(380, 9_000) } });
    const view = trayViewOf(snapshot({ instances: [a, b] }));
    expect(view.state).toBe('serving');
    expect(view.title).toBe('2 · 0.38s');
    expect(view.tooltip).toContain('exobar: 2 models: 2 serving');
    expect(view.tooltip).toContain('Latest time to first token 0.38s');
  });

  it("says whether each local model stays loaded, in the Models panel's words", () => {
    const at = 1_000_000;
    const base = instance('a').residency;
    const idle = instance('a', { residency: { ...base, idleSince: at - 60_000, unloadsAt: at + 4 * 60_000 } });
    const pinned = instance('b', { residency: { ...base, pinned: true, unloadsAt: null } });
    const busy = instance('c', { residency: { ...base, idleSince: null, unloadsAt: null } });
    const loading = instance('d', { status: { kind: 'RunnerLoading', layersLoaded: 3, totalLayers: 16 } });
    const lines = trayViewOf(snapshot({ at, instances: [idle, pinned, busy, loading] })).tooltip.split('\n');
    expect(lines).toContain('Model a: loaded · unloads in 4 min');
    expect(lines).toContain('Model b: pinned');
    expect(lines).toContain('Model c: loaded · in use');
    expect(lines).toContain('Model d: Loading 3 of 16 layers');
  });

  it('titles just the count before any TTFT sample', () => {
    expect(trayViewOf(snapshot({ instances: [instance('a')] })).title).toBe('1');
  });

  it('shows prefilling while any instance prefills, with progress in the tooltip', () => {
    const busy = instance('b', { status: { kind: 'RunnerRunning' }, prefill: { requestId: 'r', processedTokens: 12_288, totalTokens: 30_000, etaMs: 11_000 } });
    const view = trayViewOf(snapshot({ instances: [instance('a'), busy] }));
    expect(view.state).toBe('prefilling');
    expect(view.tooltip).toContain('Model b prefilling 12,288/30,000 tokens');
  });

  it('a warning outranks activity', () => {
    const busy = instance('b', { prefill: { requestId: 'r', processedTokens: 1, totalTokens: 2, etaMs: null } });
    const view = trayViewOf(snapshot({ instances: [instance('a'), busy], warnings: [warning('two_ring_fast_synch', ['a', 'b'])] }));
    expect(view.state).toBe('warning');
    expect(view.tooltip).toContain('Warning: Warning two_ring_fast_synch');
  });

  it('a failed runner outranks a warning and is named in the tooltip', () => {
    const failed = instance('b', { status: { kind: 'RunnerFailed', errorMessage: 'out of memory' } });
    const view = trayViewOf(snapshot({ instances: [instance('a'), failed], warnings: [warning('fast_synch_mismatch', ['b'])] }));
    expect(view.state).toBe('failed');
    expect(view.title).toBe('1');
    expect(view.tooltip).toContain('Model b: Failed: out of memory');
  });

  it('a failed launch shows as failed', () => {
    const launch = { state: 'failed' as const, step: 'Loading', models: ['x'], current: 0, error: 'not enough memory', startedAt: 0 };
    const view = trayViewOf(snapshot({ launch }));
    expect(view.state).toBe('failed');
    expect(view.tooltip).toContain('Launch failed: not enough memory');
  });

  it('counts exo models beside local ones and names the exo cluster, reachable or not', async () => {
    const exo = await mappedExoSnapshot();
    const view = trayViewOf({ ...exo, instances: [instance('a'), ...exo.instances] });
    // The demo: three exo models, one with a failed runner on mini-b, plus the local one.
    expect(view.title).toBe('3');
    expect(view.state).toBe('failed');
    expect(view.tooltip).toContain('exobar: 4 models: 3 serving · 1 failed');
    expect(view.tooltip).toContain(`exo at ${exo.exo!.url}: 2 Macs, 3 models (2 serving)`);

    const lost = await mappedExoSnapshot({
      then: async (h) => {
        await h.fake.refuse();
        await h.round(1_000);
      },
    });
    expect(trayViewOf(lost).tooltip).toMatch(new RegExp(`exo at ${lost.exo!.url}: not reachable since \\d\\d:\\d\\d:\\d\\d`));
  });

  it('with exo unreachable counts only the models it still sees and says "exo unreachable" instead of a stale count', async () => {
    const lost = await mappedExoSnapshot({
      then: async (h) => {
        await h.fake.refuse();
        await h.round(1_000);
      },
    });
    expect(lost.instances.length).toBeGreaterThan(0);
    const view = trayViewOf({ ...lost, instances: [instance('a'), ...lost.instances] });
    expect(view.title).toBe('1 · exo unreachable');
    const first = view.tooltip.split('\n')[0];
    expect(first).toBe('exobar: 1 model: 1 serving (exo unreachable)');
    // exo's last-seen models get no status line of their own: exo cannot be asked about them.
    const lines = view.tooltip.split('\n');
    for (const i of lost.instances) expect(lines.filter((l) => l.startsWith(`${i.modelName}:`))).toEqual([]);
    expect(trayViewOf(lost).title).toBe('exo unreachable');
    expect(trayViewOf(lost).tooltip.split('\n')[0]).toBe('exobar: no models running (exo unreachable)');
  });
});

describe("tray: this Mac's exo", () => {
  it('glances at its own state beside the icon and says more in the tooltip', () => {
    expect(trayViewOf(snapshot({ exoProcess: EXO_STATES.starting() })).title).toBe('exo starting');
    const running = trayViewOf(snapshot({ instances: [instance('a')], exoProcess: EXO_STATES.running() }));
    expect(running).toMatchObject({ state: 'serving', title: '1 · exo running' });
    expect(running.tooltip).toContain("This Mac's exo: running (pid 4242), fast synch off");
    expect(trayViewOf(snapshot({ exoProcess: EXO_STATES.stopping() })).title).toBe('exo stopping');
    expect(trayViewOf(snapshot({ exoProcess: EXO_STATES.stopped() })).title).toBe('');
    expect(trayViewOf(snapshot({ exoProcess: null })).tooltip).not.toContain("This Mac's exo");
  });

  it('a crash with no restart coming, or runners left behind, is failed, with the reason in the tooltip', () => {
    const crashed = trayViewOf(snapshot({ exoProcess: EXO_STATES.crashed() }));
    expect(crashed).toMatchObject({ state: 'failed', title: 'exo crashed' });
    expect(crashed.tooltip).toContain("This Mac's exo: crashed (exit code 1)");
    const wedged = trayViewOf(snapshot({ exoProcess: EXO_STATES.needsAttention() }));
    expect(wedged).toMatchObject({ state: 'failed', title: 'exo needs attention' });
    expect(wedged.tooltip).toMatch(/the GPU may be wedged.*reboot the Mac/);
  });

  it('a crash restart on its way is a warning', () => {
    expect(trayViewOf(snapshot({ exoProcess: EXO_STATES.restarting() }))).toMatchObject({ state: 'warning', title: 'exo restarting' });
  });
});
