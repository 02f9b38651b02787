/**
 * The menu bar title by the `menuBarTitle` setting: TTFT (the default, as before),
 * tokens/s, or nothing; first from the real node's snapshot while a sim model streams,
 * then each case with its words; and the menu's "Menu bar title" entry.
 */
import type { MenuItem, MenuItemConstructorOptions } from 'electron';
import OpenAI from 'openai';
import { describe, expect, it, vi } from 'vitest';
import { SettingsSchema } from '../../shared/api';
import { startCoreRig } from '../../test/support/api-harness';
import { instance, snapshot, ttftSample } from '../../test/support/electron/snapshot-fixtures';
import { EXO_STATES } from '../../test/support/exo-process-fixture';
import { buildTrayMenu, type TrayMenuActions } from './tray-menu';
import { menuSignature } from './tray-controller';
import { trayViewOf } from './tray-state';
import { formatTokensPerSecond, menuBarTitleText, totalTokensPerSecond } from './tray-title';

describe('menu bar title', () => {
  it('from a running node: TTFT, tokens/s or nothing, each from the snapshot the tray gets', async () => {
    const rig = await startCoreRig();
    try {
      await rig.launch('sim/llama-3.2-1b');
      const client = new OpenAI({ baseURL: `${rig.url}/v1`, apiKey: 'unused', maxRetries: 0 });
      const stream = await client.chat.completions.create({
        model: 'sim/llama-3.2-1b',
        messages: [{ role: 'user', content: 'count' }],
        max_tokens: 400,
        stream: true,
      });
      const chunks = (async () => {
        for await (const chunk of stream) void chunk;
      })();
      // While it streams: the rate is measured and the first token's time is known.
      await expect.poll(() => rig.node.snapshot().instances[0]?.tokensPerSecond ?? null, { timeout: 20_000 }).not.toBeNull();
      const s = rig.node.snapshot();
      const rate = totalTokensPerSecond(s)!;
      expect(rate).toBeGreaterThan(0);
      expect(menuBarTitleText(s, 'tokens_per_second')).toBe(`1 · ${formatTokensPerSecond(rate)}`);
      expect(menuBarTitleText(s, 'tokens_per_second')).toMatch(/^1 · \d+(\.\d)? tok\/s$/);
      expect(menuBarTitleText(s, 'ttft')).toBe(`1 · ${(s.instances[0]!.ttft.latest!.totalMs / 1000).toFixed(2)}s`);
      expect(menuBarTitleText(s, 'nothing')).toBe('');
      // The tray's view takes the setting; without one it shows TTFT, as it always did.
      expect(trayViewOf(s).title).toBe(menuBarTitleText(s, 'ttft'));
      expect(trayViewOf(s, 'tokens_per_second').title).toBe(menuBarTitleText(s, 'tokens_per_second'));
      stream.controller.abort();
      await chunks.catch(() => undefined);
    } finally {
      await rig.close();
    }
  });

  it('says each case in its words', () => {
    const a = instance('a', { tokensPerSecond: 30.4, ttft: { samples: [], p50Ms: null, p95Ms: null, latest: ttftSample(230, 5_000) } });
    const b = instance('b', { tokensPerSecond: 11.2, ttft: { samples: [], p50Ms: null, p95Ms: null, latest: ttftSample(380, 9_000) } });
    const two = snapshot({ instances: [a, b] });
    expect(menuBarTitleText(two, 'ttft')).toBe('2 · 0.38s');
    expect(menuBarTitleText(two, 'tokens_per_second')).toBe('2 · 42 tok/s');
    expect(menuBarTitleText(two, 'nothing')).toBe('');
    // Below 10 tokens/s one decimal; no rate measured yet (idle, no sample): the count alone.
    expect(menuBarTitleText(snapshot({ instances: [instance('a', { tokensPerSecond: 7.46 })] }), 'tokens_per_second')).toBe('1 · 7.5 tok/s');
    expect(menuBarTitleText(snapshot({ instances: [instance('a')] }), 'tokens_per_second')).toBe('1');
    // Nothing runs: no title, whatever the setting.
    expect(menuBarTitleText(snapshot(), 'tokens_per_second')).toBe('');
    // This Mac's exo as exobar runs it follows the figure, except with "nothing".
    const withExo = snapshot({ instances: [a], exoProcess: EXO_STATES.running() });
    expect(menuBarTitleText(withExo, 'tokens_per_second')).toBe('1 · 30 tok/s · exo running');
    expect(menuBarTitleText(withExo, 'nothing')).toBe('');
  });

  it('is a setting, TTFT by default, refusing anything else', () => {
    expect(SettingsSchema.parse({}).menuBarTitle).toBe('ttft');
    expect(SettingsSchema.parse({ menuBarTitle: 'tokens_per_second' }).menuBarTitle).toBe('tokens_per_second');
    expect(SettingsSchema.safeParse({ menuBarTitle: 'tokens/s' }).success).toBe(false);
  });

  it("has a menu entry: one radio item per choice, the setting's checked, a click sets it, and the menu is rebuilt", () => {
    const actions = { setMenuBarTitle: vi.fn() } as unknown as TrayMenuActions & { setMenuBarTitle: ReturnType<typeof vi.fn> };
    const menu = buildTrayMenu(snapshot(), { startAtLogin: false, menuBarTitle: 'tokens_per_second' }, actions);
    const entry = menu.find((m) => m.id === 'menu-bar-title')!;
    expect(entry.label).toBe('Menu bar title');
    const items = entry.submenu as MenuItemConstructorOptions[];
    expect(items.map((i) => [i.label, i.type, i.checked])).toEqual([
      ['Time to first token (TTFT)', 'radio', false],
      ['Tokens per second (tokens/s)', 'radio', true],
      ['Nothing', 'radio', false],
    ]);
    items[2]!.click?.({} as MenuItem, undefined, {} as Electron.KeyboardEvent);
    expect(actions.setMenuBarTitle).toHaveBeenCalledWith('nothing');
    const after = buildTrayMenu(snapshot(), { startAtLogin: false, menuBarTitle: 'nothing' }, actions);
    expect(menuSignature(after)).not.toBe(menuSignature(menu));
    expect(menuSignature(buildTrayMenu(snapshot(), { startAtLogin: false }, actions))).toBe(
      menuSignature(buildTrayMenu(snapshot(), { startAtLogin: false, menuBarTitle: 'ttft' }, actions)),
    );
  });
});
