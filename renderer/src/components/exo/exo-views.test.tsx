/**
 * The exo views over snapshots the real mapper produced (a fake exo over HTTP, an
 * ExoMonitor attached to it): the source header, exo instance cards with per-node
 * runner rows, the queue split by place, pending cancellations, the warnings with
 * "assumed", the unreachable and restarted states, and the attach entry and offer.
 */
import { act, cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Snapshot } from '../../../../shared/snapshot';
import { instance, snapshot } from '../../../../test/support/renderer/fixtures';
import { loadProxiedScenario, loadViewScenarios } from '../../../../test/support/renderer/exo-scenarios';
import { renderApp } from '../../../../test/support/renderer/render-app';

afterEach(cleanup);

const QWEN_30B = 'mlx-community/Qwen3-30B-A3B-4bit';
const LLAMA_1B = 'mlx-community/Llama-3.2-1B-Instruct-4bit';
const LLAMA_3B = 'mlx-community/Llama-3.2-3B-Instruct-4bit';

let demo: Snapshot;
let loading: Snapshot;
let unreachable: Snapshot;
let restarted: Snapshot;

beforeAll(async () => {
  ({ demo, loading, unreachable, restarted } = await loadViewScenarios());
}, 30_000);

const card = (model: string) => screen.getAllByTestId('instance-card').find((c) => c.getAttribute('data-instance') === `exo:${model}`)!;

describe('attached to the demo cluster', () => {
  it('shows the source: exo at its URL, 2 Macs, connected, with the Macs and their fast synch assumed on', () => {
    renderApp(demo);
    const source = screen.getByTestId('exo-source');
    expect(source.textContent).toContain(`exo at ${demo.exo!.url}`);
    expect(source.textContent).toContain('2 Macs');
    expect(screen.getByTestId('exo-connection').textContent).toBe('connected');
    expect(screen.getAllByTestId('exo-node').map((n) => n.getAttribute('data-node'))).toEqual(['studio-a', 'mini-b']);
    expect(source.textContent).toContain('fast synch on (assumed)');
    expect(screen.queryByTestId('exo-restarted')).toBeNull();
  });

  it('shows each exo instance with its runner rows in plain words, the exo tag in a tooltip', () => {
    renderApp(demo);
    expect(screen.getAllByTestId('instance-card').map((c) => c.getAttribute('data-instance'))).toEqual([
      `exo:${LLAMA_1B}`,
      `exo:${LLAMA_3B}`,
      `exo:${QWEN_30B}`,
    ]);
    const qwen = within(card(QWEN_30B));
    const runner = qwen.getByTestId('exo-runner');
    expect(runner.getAttribute('data-node')).toBe('studio-a');
    expect(runner.textContent).toContain('rank 0');
    expect(qwen.getByTestId('exo-runner-status').textContent).toBe('Running');
    expect(qwen.getByTestId('exo-runner-status').getAttribute('title')).toContain('exo: RunnerRunning');
  });

  it('says which exo instance exobar placed for a request and when it deletes it; none on the ones someone else placed', () => {
    const placed: Snapshot = {
      ...demo,
      instances: demo.instances.map((i) =>
        i.source === 'exo' && i.model === LLAMA_3B ? { ...i, exo: { ...i.exo, placedOnDemand: { ttlSeconds: 60, unloadsAt: demo.at + 40_000 } } } : i,
      ),
    };
    renderApp(placed);
    const row = within(card(LLAMA_3B)).getByTestId('exo-placed-on-demand');
    expect(row.textContent).toMatch(/^Placed by exobar for a request(unloads in (39|40) s)$/);
    expect(within(card(LLAMA_1B)).queryByTestId('exo-placed-on-demand')).toBeNull();
    expect(within(card(QWEN_30B)).queryByTestId('exo-placed-on-demand')).toBeNull();
  });

  it('stops an exo instance through the bridge (exobar deletes it on exo), asking first since its tasks would end', async () => {
    const { bridge } = renderApp(demo);
    const name = QWEN_30B.split('/').pop()!;
    fireEvent.click(within(card(QWEN_30B)).getByRole('button', { name: `Stop ${name}` }));
    const dialog = screen.getByRole('alertdialog', { name: `Stop ${name}?` });
    expect(bridge.stopInstance).not.toHaveBeenCalled();
    await act(async () => fireEvent.click(within(dialog).getByRole('button', { name: 'Stop anyway' })));
    await waitFor(() => expect(bridge.stopInstance).toHaveBeenCalledWith(`exo:${QWEN_30B}`, { confirm: true }));
  });

  it("shows a failed runner with exo's message and its typed diagnostics", () => {
    renderApp(demo);
    const llama = within(card(LLAMA_3B));
    expect(llama.getByTestId('exo-runner-status').textContent).toBe('Failed: Terminated (signal=6 (Abort trap: 6))');
    expect(llama.getByTestId('exo-runner').getAttribute('data-node')).toBe('mini-b');
    expect(llama.getAllByTestId('exo-diagnostic').map((d) => d.textContent)).toEqual([expect.stringContaining('RunnerMetalGpuTimeout')]);
  });

  it('shows the queue in the runner, not observed, with live ages, and the pending cancellation with its age', async () => {
    const { store } = renderApp(demo);
    const qwen = within(card(QWEN_30B));
    const tasks = qwen.getAllByTestId('exo-task');
    expect(tasks.map((t) => t.getAttribute('data-place'))).toEqual(['in_runner', 'in_runner', 'in_runner']);
    expect(tasks.every((t) => t.textContent!.includes('not observed'))).toBe(true);
    // Nothing came through exobar: no empty exobar sections.
    expect(qwen.queryByText('Through exobar')).toBeNull();
    expect(qwen.queryByTestId('ttft-breakdown')).toBeNull();
    const cancel = qwen.getByTestId('pending-cancel');
    expect(cancel.textContent).toContain('exo has not completed its CancelTask');
    const age = () => Number(/(\d+) s/.exec(tasks[0]!.querySelector('.age')!.textContent!)![1]);
    const before = age();
    // Ages keep counting between snapshots, as local queues' do.
    act(() => store.setState({ receivedAt: store.getState().receivedAt - 3_000 }));
    await waitFor(() => expect(age()).toBeGreaterThanOrEqual(before + 3));
  });

  it('shows the warnings through the banner, "assumed" where fast synch was assumed, with no local relaunch button', () => {
    renderApp(demo);
    const banners = screen.getAllByTestId('warning-banner');
    expect(banners.map((b) => b.getAttribute('data-code')).sort()).toEqual(['exo_runner_failed', 'two_ring_fast_synch']);
    const ring = banners.find((b) => b.getAttribute('data-code') === 'two_ring_fast_synch')!;
    expect(within(ring).getByTestId('warning-assumed').textContent).toBe('assumed');
    expect(within(ring).queryByRole('button')).toBeNull();
    const failed = banners.find((b) => b.getAttribute('data-code') === 'exo_runner_failed')!;
    expect(within(failed).queryByTestId('warning-assumed')).toBeNull();
  });

  it('keeps Stop all off while only exo models run (they are exo’s to stop)', () => {
    renderApp(demo);
    expect((screen.getByRole('button', { name: 'Stop all' }) as HTMLButtonElement).disabled).toBe(true);
  });

  it('shows local instances beside exo ones', () => {
    renderApp({ ...demo, instances: [instance(), ...demo.instances] });
    expect((screen.getByRole('button', { name: 'Stop all' }) as HTMLButtonElement).disabled).toBe(false);
    expect(screen.getAllByTestId('instance-card').map((c) => c.getAttribute('data-source') ?? 'local')).toEqual(['local', 'exo', 'exo', 'exo']);
  });
});

describe('following exo', () => {
  it('shows runners loading layer by layer on each Mac and the request waiting for the load', () => {
    renderApp(loading);
    const qwen = within(card(QWEN_30B));
    expect(qwen.getAllByTestId('exo-runner-status').map((s) => s.textContent)).toEqual(['Loading 4 of 24 layers', 'Loading 4 of 24 layers']);
    expect(qwen.getAllByRole('progressbar')).toHaveLength(2);
    expect(qwen.getAllByTestId('exo-task').map((t) => t.getAttribute('data-place'))).toEqual(['waiting_for_load']);
    expect(document.body.textContent).not.toContain('must never reach the page');
  });

  it('shows exo not reachable since when, with the last error, and recovers with the next snapshot', () => {
    const { push } = renderApp(unreachable);
    expect(screen.getByTestId('exo-source').getAttribute('data-connected')).toBe('false');
    expect(screen.getByTestId('exo-connection').textContent).toMatch(/^not reachable since \d\d:\d\d:\d\d$/);
    expect(screen.getByTestId('exo-source').textContent).toContain('exobar retries by itself');
    expect(screen.getAllByTestId('warning-banner').map((b) => b.getAttribute('data-code'))).toContain('exo_unreachable');
    push({ ...demo, seq: unreachable.seq + 1 });
    expect(screen.getByTestId('exo-connection').textContent).toBe('connected');
  });

  it('says "exo unreachable" in the header instead of counting the exo models it can no longer see', () => {
    expect(unreachable.instances.some((i) => i.source === 'exo')).toBe(true);
    const { push } = renderApp({ ...unreachable, instances: [instance(), ...unreachable.instances] });
    expect(screen.getByTestId('running-count').textContent).toBe('1 local model running');
    expect(screen.getByTestId('exo-unreachable').textContent).toBe('exo unreachable');
    push({ ...demo, seq: unreachable.seq + 1 });
    expect(screen.queryByTestId('exo-unreachable')).toBeNull();
    expect(screen.getByTestId('running-count').textContent).toMatch(/^\d+ models? running$/);
  });

  it('explains ring and JACCL in a tooltip wherever an instance type is shown', async () => {
    renderApp({ ...demo, instances: [instance(), ...demo.instances] });
    const words = screen.getAllByTestId('instance-type');
    expect(words.length).toBe(demo.instances.length + 1);
    for (const w of words) {
      expect(w.getAttribute('title')).toMatch(w.textContent === 'ring' ? /^ring: exo's instance type/ : /^JACCL: exo's instance type/);
    }
    // The safe launch plan shows the type too.
    await waitFor(() => expect(screen.getAllByTestId('plan-row').length).toBeGreaterThan(0));
    for (const row of screen.getAllByTestId('plan-row')) expect(within(row).getByTestId('instance-type').getAttribute('title')).toBeTruthy();
  });

  it('says when exo restarted and its instances were matched by model', () => {
    renderApp(restarted);
    expect(screen.getByTestId('exo-restarted').textContent).toMatch(/^exo restarted: instances matched by model/);
    expect(within(card(QWEN_30B)).getByText('matched by model')).toBeTruthy();
  });
});

describe('requests through exobar', () => {
  let proxied: Snapshot;
  beforeAll(async () => {
    proxied = await loadProxiedScenario();
  }, 60_000);

  it('shows a proxied request like a local one: prefill progress, phases, held by exobar, TTFT parts, observed', () => {
    renderApp(proxied);
    const llama = within(card(LLAMA_3B));
    const prefill = llama.getByTestId('prefill');
    // exo's prefill reads one token less than the 40,000-token prompt (its last comes with the first token).
    expect(prefill.textContent).toMatch(/\/ 39,999 tokens/);
    expect(within(prefill).getByRole('progressbar')).toBeTruthy();
    const rows = llama.getAllByTestId('queue-row');
    expect(rows.map((r) => [r.getAttribute('data-phase'), r.querySelector('.phase')!.textContent])).toEqual([
      ['prefilling', 'Prefilling'],
      ['queued', 'Held by exobar'],
    ]);
    expect(llama.getByTestId('ttft-breakdown').textContent).toMatch(/wait.*prefill.*first token/);
    // exo's task of the prefilling request came through exobar: no "not observed" on it.
    expect(llama.getAllByTestId('exo-task').map((t) => t.getAttribute('data-observed'))).toEqual(['true']);
  });
});

describe('attaching', () => {
  it('offers an exo found on this Mac and attaches only when asked', async () => {
    const { bridge } = renderApp(snapshot({ exoOffer: { url: 'http://127.0.0.1:52415', nodeId: 'f'.repeat(32), foundAt: 1 } }));
    const offer = screen.getByTestId('exo-offer');
    expect(offer.textContent).toContain('exo found on this Mac');
    expect(bridge.attachExo).not.toHaveBeenCalled();
    fireEvent.click(within(offer).getByRole('button', { name: 'Attach' }));
    await waitFor(() => expect(bridge.attachExo).toHaveBeenCalledWith('http://127.0.0.1:52415'));
  });

  it('tests an address, says what answers there, then attaches', async () => {
    const { bridge } = renderApp(snapshot());
    const panel = within(screen.getByRole('region', { name: 'Attach to exo' }));
    fireEvent.click(panel.getByRole('button', { name: /Attach to exo/ }));
    fireEvent.change(panel.getByLabelText(/exo's API address/), { target: { value: 'http://10.0.0.5:52415' } });
    bridge.probeExo.mockResolvedValueOnce({ ok: false, url: 'http://10.0.0.5:52415', error: 'connection refused' });
    fireEvent.click(panel.getByRole('button', { name: 'Test' }));
    expect((await panel.findByTestId('exo-probe-result')).textContent).toBe('Nothing exo-like answers at http://10.0.0.5:52415: connection refused');
    fireEvent.click(panel.getByRole('button', { name: 'Test' }));
    await waitFor(() => expect(panel.getByTestId('exo-probe-result').textContent).toContain('exo answers at http://10.0.0.5:52415 (node aaaaaaaa, 2 Macs)'));
    fireEvent.click(panel.getByRole('button', { name: 'Attach' }));
    await waitFor(() => expect(bridge.attachExo).toHaveBeenCalledWith('http://10.0.0.5:52415'));
  });

  it('hides the attach entry and the offer once attached', () => {
    renderApp({ ...demo, exoOffer: { url: 'http://127.0.0.1:52415', nodeId: 'f'.repeat(32), foundAt: 1 } });
    expect(screen.queryByTestId('exo-offer')).toBeNull();
    expect(screen.queryByRole('region', { name: 'Attach to exo' })).toBeNull();
  });
});

describe('exo still generating a cancelled request', () => {
  let ghost: Snapshot;
  beforeAll(async () => {
    ghost = await (await import('../../../../test/support/renderer/exo-scenarios')).loadGhostScenario();
  }, 30_000);

  it('says so on the card with its age, and warns naming the model and the Mac', () => {
    renderApp(ghost);
    const row = within(card(LLAMA_1B)).getByTestId('exo-ghost-generation');
    expect(row.textContent).toBe('cancelledstill generating a cancelled request, 9 s');
    expect(within(card(LLAMA_3B)).queryByTestId('exo-ghost-generation')).toBeNull();
    const banner = screen.getAllByTestId('warning-banner').find((b) => b.getAttribute('data-code') === 'exo_cancelled_still_running')!;
    expect(banner.textContent).toContain('Llama-3.2-1B-Instruct-4bit on studio-a is still generating a cancelled request (9 s)');
  });
});
