import type { MenuItem, MenuItemConstructorOptions } from 'electron';
import { describe, expect, it, vi } from 'vitest';
import { instance, request, snapshot } from '../../test/support/electron/snapshot-fixtures';
import { mappedExoSnapshot } from '../../test/support/fake-exo';
import { buildTrayMenu, MENU_LABELS, type TrayMenuActions } from './tray-menu';

function actions(): TrayMenuActions & Record<string, ReturnType<typeof vi.fn>> {
  return {
    launchSafePair: vi.fn(),
    stopAll: vi.fn(),
    exportDiagnostics: vi.fn(),
    openWindow: vi.fn(),
    openLog: vi.fn(),
    copyApiUrl: vi.fn(),
    setStartAtLogin: vi.fn(),
    setMenuBarTitle: vi.fn(),
    quit: vi.fn(),
  };
}

const byId = (menu: MenuItemConstructorOptions[], id: string) => {
  const item = menu.find((m) => m.id === id);
  if (!item) throw new Error(`no menu item ${id}`);
  return item;
};

const click = (item: MenuItemConstructorOptions, checked = false) => item.click?.({ checked } as MenuItem, undefined, {} as Electron.KeyboardEvent);

describe('tray menu', () => {
  it('lists each model with its status (no counts that change with every request), then the entries in order', () => {
    const a = instance('a', { modelName: 'Llama 3.2 1B (simulated)' });
    const b = instance('b', {
      modelName: 'Llama 3.2 3B (simulated)',
      status: { kind: 'RunnerRunning' },
      queue: { capacity: 64, requests: [request('r1', 'prefilling'), request('r2', 'queued'), request('r3', 'awaiting_ack')] },
    });
    const menu = buildTrayMenu(snapshot({ instances: [a, b] }), { startAtLogin: false }, actions());
    const labels = menu.map((m) => (m.type === 'separator' ? '—' : m.label));
    expect(labels).toEqual([
      'Llama 3.2 1B (simulated) — Ready',
      'Llama 3.2 3B (simulated) — Running',
      '—',
      MENU_LABELS.launchSafePair,
      MENU_LABELS.stopAll,
      '—',
      MENU_LABELS.exportDiagnostics,
      MENU_LABELS.open,
      MENU_LABELS.copyApiUrl,
      '—',
      'Menu bar title',
      MENU_LABELS.startAtLogin,
      '—',
      MENU_LABELS.quit,
    ]);
  });

  it('says so when no model runs, and disables Stop all', () => {
    const menu = buildTrayMenu(snapshot(), { startAtLogin: false }, actions());
    expect(byId(menu, 'no-models')).toMatchObject({ label: 'No models running', enabled: false });
    expect(byId(menu, 'stop-all').enabled).toBe(false);
  });

  it("lists exo's models with their runners' state, and keeps Stop all off while only exo's run", async () => {
    const exo = await mappedExoSnapshot();
    const menu = buildTrayMenu(exo, { startAtLogin: false }, actions());
    const labels = menu.filter((m) => m.id?.startsWith('instance:')).map((m) => m.label);
    expect(labels).toEqual([
      'Llama-3.2-1B-Instruct-4bit — exo: 1/1 runners serving',
      'Llama-3.2-3B-Instruct-4bit — Failed: Terminated (signal=6 (Abort trap: 6))',
      'Qwen3-30B-A3B-4bit — exo: 1/1 runners serving',
    ]);
    expect(byId(menu, 'stop-all').enabled).toBe(false);
    expect(byId(buildTrayMenu({ ...exo, instances: [instance('a'), ...exo.instances] }, { startAtLogin: false }, actions()), 'stop-all').enabled).toBe(true);
  });

  it('shows loading (without the layer count, which changes all the time) and failures in the model line', () => {
    const loading = instance('a', { modelName: 'A', status: { kind: 'RunnerLoading', layersLoaded: 12, totalLayers: 28 } });
    const failed = instance('b', { modelName: 'B', status: { kind: 'RunnerFailed', errorMessage: 'GPU wedged' } });
    const menu = buildTrayMenu(snapshot({ instances: [loading, failed] }), { startAtLogin: false }, actions());
    expect(byId(menu, 'instance:a').label).toBe('A — Loading');
    expect(byId(menu, 'instance:b').label).toBe('B — Failed: GPU wedged');
  });

  it('each entry calls its action', () => {
    const act = actions();
    const menu = buildTrayMenu(snapshot({ instances: [instance('a')] }), { startAtLogin: false }, act);
    click(byId(menu, 'launch-safe-pair'));
    click(byId(menu, 'stop-all'));
    click(byId(menu, 'export-diagnostics'));
    click(byId(menu, 'open'));
    click(byId(menu, 'copy-api-url'));
    click(byId(menu, 'quit'));
    const model = byId(menu, 'instance:a').submenu as MenuItemConstructorOptions[];
    click(byId(model, 'show:a'));
    click(byId(model, 'log:a'));
    expect(act.openLog).toHaveBeenCalledExactlyOnceWith('a');
    expect(act.launchSafePair).toHaveBeenCalledOnce();
    expect(act.stopAll).toHaveBeenCalledOnce();
    expect(act.exportDiagnostics).toHaveBeenCalledOnce();
    expect(act.openWindow).toHaveBeenCalledTimes(2);
    expect(act.copyApiUrl).toHaveBeenCalledOnce();
    expect(act.quit).toHaveBeenCalledOnce();
  });

  it('with exo unreachable names its models as last seen, not with a status exo can no longer give', async () => {
    const lost = await mappedExoSnapshot({
      then: async (h) => {
        await h.fake.refuse();
        await h.round(1_000);
      },
    });
    const labels = buildTrayMenu(lost, { startAtLogin: false }, actions())
      .filter((i) => String(i.id).startsWith('instance:'))
      .map((i) => i.label);
    expect(labels.length).toBeGreaterThan(0);
    for (const label of labels) expect(label).toMatch(/ — last seen, exo unreachable$/);
  });

  it("a local model's line offers its details and its runner's log; an exo model's opens the popover", async () => {
    const act = actions();
    const exo = await mappedExoSnapshot();
    const menu = buildTrayMenu({ ...exo, instances: [instance('a'), exo.instances[0]!] }, { startAtLogin: false }, act);
    const local = byId(menu, 'instance:a');
    expect((local.submenu as MenuItemConstructorOptions[]).map((m) => m.label)).toEqual([MENU_LABELS.showModel, MENU_LABELS.openLog]);
    const remote = byId(menu, `instance:${exo.instances[0]!.id}`);
    expect(remote.submenu).toBeUndefined();
    click(remote);
    expect(act.openWindow).toHaveBeenCalledOnce();
    expect(act.openLog).not.toHaveBeenCalled();
  });

  it('Start at login is a checkbox reflecting the login item; a click passes the new state', () => {
    const act = actions();
    const item = byId(buildTrayMenu(snapshot(), { startAtLogin: true }, act), 'start-at-login');
    expect(item).toMatchObject({ type: 'checkbox', checked: true });
    click(item, false);
    expect(act.setStartAtLogin).toHaveBeenCalledWith(false);
  });

  it('disables Launch safe pair while a launch runs, saying which model (not which layer) it is at', () => {
    const launch = {
      state: 'running' as const,
      step: 'Loading sim/llama-3.2-3b (12/28 layers)',
      models: ['sim/llama-3.2-1b', 'sim/llama-3.2-3b'],
      current: 1,
      error: null,
      startedAt: 0,
    };
    const item = byId(buildTrayMenu(snapshot({ launch }), { startAtLogin: false }, actions()), 'launch-safe-pair');
    expect(item).toMatchObject({ enabled: false, label: 'Launching safe pair (model 2 of 2)…' });
    const later = byId(
      buildTrayMenu(snapshot({ launch: { ...launch, step: 'Loading sim/llama-3.2-3b (13/28 layers)' } }), { startAtLogin: false }, actions()),
      'launch-safe-pair',
    );
    expect(later.label).toBe(item.label);
  });

  it('disables Copy API URL when no API server runs', () => {
    const item = byId(buildTrayMenu(snapshot({ apiBaseUrl: null }), { startAtLogin: false }, actions()), 'copy-api-url');
    expect(item.enabled).toBe(false);
  });
});
