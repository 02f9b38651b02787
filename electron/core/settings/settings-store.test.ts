import { mkdtemp, readdir, readFile, rm, stat, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultSettings } from '../../../shared/api';
import { loadSettings, saveSettings, SETTINGS_FILE, SettingsStore, type SettingsLogger } from './settings-store';

let dir: string;
let logged: string[];
const logger: SettingsLogger = {
  warn: ((_obj: unknown, msg?: string) => void logged.push(msg ?? '')) as SettingsLogger['warn'],
  info: (() => undefined) as SettingsLogger['info'],
};

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'exobar-settings-'));
  logged = [];
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const file = () => join(dir, SETTINGS_FILE);

describe('loadSettings', () => {
  it('gives defaults for a missing file, without a warning and without writing', async () => {
    const r = await loadSettings(dir, logger);
    expect(r).toEqual({ settings: defaultSettings(), warning: null });
    expect(await readdir(dir)).toEqual([]);
    expect(logged).toEqual([]);
  });

  it('reads a saved file back', async () => {
    const s = { ...defaultSettings(), apiPort: 6000, defaultFastSynch: 'off' as const, safePair: { small: 'a/x', medium: 'b/y' } };
    await saveSettings(dir, s);
    expect(await loadSettings(dir, logger)).toEqual({ settings: s, warning: null });
  });

  it('fills missing fields of a partial file with defaults', async () => {
    await writeFile(file(), JSON.stringify({ apiPort: 7000 }));
    const r = await loadSettings(dir, logger);
    expect(r.warning).toBeNull();
    expect(r.settings).toEqual({ ...defaultSettings(), apiPort: 7000 });
  });

  it.each([
    ['not JSON', '{"apiPort": 52416,', /not valid JSON/],
    ['an empty file', '', /not valid JSON/],
    ['a wrong type', JSON.stringify({ apiPort: 'high' }), /invalid: .*apiPort/],
    ['an out-of-range port', JSON.stringify({ apiPort: 70000 }), /invalid: .*apiPort/],
    ['an unknown override', JSON.stringify({ defaultFastSynch: 'maybe' }), /invalid: .*defaultFastSynch/],
    ['not an object', '[1,2]', /invalid/],
  ])('replaces %s by defaults, keeps a copy and reports it', async (_name, content, reason) => {
    await writeFile(file(), content);
    const r = await loadSettings(dir, logger);
    expect(r.settings).toEqual(defaultSettings());
    expect(r.warning).toMatch(reason);
    expect(r.warning).toMatch(/replaced by defaults and the old file kept as .*settings\.json\.corrupt-/);
    expect(logged).toEqual([r.warning]);

    const files = await readdir(dir);
    const backup = files.find((f) => f.startsWith(`${SETTINGS_FILE}.corrupt-`));
    expect(backup).toBeDefined();
    expect(await readFile(join(dir, backup ?? ''), 'utf8')).toBe(content);
    // The defaults now on disk load cleanly.
    expect(JSON.parse(await readFile(file(), 'utf8'))).toEqual(defaultSettings());
    expect(await loadSettings(dir, logger)).toEqual({ settings: defaultSettings(), warning: null });
  });

  it('reports an unreadable settings path without crashing or touching it', async () => {
    await mkdir(file());
    const r = await loadSettings(dir, logger);
    expect(r.settings).toEqual(defaultSettings());
    expect(r.warning).toMatch(/Could not read/);
    expect((await stat(file())).isDirectory()).toBe(true);
  });
});

describe('watchdog limits in settings', () => {
  it('takes any subset of the limits and refuses one too short to outlast a prefill chunk', async () => {
    await writeFile(file(), JSON.stringify({ watchdog: { prefillMs: 90_000 } }));
    expect((await loadSettings(dir, logger)).settings.watchdog).toEqual({ prefillMs: 90_000 });
    await writeFile(file(), JSON.stringify({ watchdog: { decodeMs: 10 } }));
    const refused = await loadSettings(dir, logger);
    expect(refused.settings).toEqual(defaultSettings());
    expect(refused.warning).toMatch(/decodeMs/);
  });
});

describe('saveSettings', () => {
  it('writes atomically: no temp file left, private mode', async () => {
    await saveSettings(dir, defaultSettings());
    expect(await readdir(dir)).toEqual([SETTINGS_FILE]);
    if (process.platform !== 'win32') expect((await stat(file())).mode & 0o777).toBe(0o600);
  });

  it('refuses invalid settings and leaves the old file as it was', async () => {
    await saveSettings(dir, { ...defaultSettings(), apiPort: 5000 });
    await expect(saveSettings(dir, { ...defaultSettings(), apiPort: -1 })).rejects.toThrow();
    expect(JSON.parse(await readFile(file(), 'utf8')).apiPort).toBe(5000);
    expect(await readdir(dir)).toEqual([SETTINGS_FILE]);
  });

  it('creates the directory when missing', async () => {
    const nested = join(dir, 'a', 'b');
    await saveSettings(nested, defaultSettings());
    expect(await readdir(nested)).toEqual([SETTINGS_FILE]);
  });
});

describe('SettingsStore', () => {
  it('opens with defaults and writes updates through', async () => {
    const store = await SettingsStore.open(dir, logger);
    expect(store.warning).toBeNull();
    const updated = await store.update({ defaultFastSynch: 'off', safePair: { medium: 'sim/other' } });
    expect(updated.defaultFastSynch).toBe('off');
    expect(updated.safePair).toEqual({ small: 'sim/llama-3.2-1b', medium: 'sim/other' });
    expect((await loadSettings(dir, logger)).settings).toEqual(updated);
  });

  it("keeps exo's start, command, arguments and environment, each patched on its own", async () => {
    const store = await SettingsStore.open(dir, logger);
    expect(store.get().exo).toEqual({ url: null, start: false, apiPort: 52415, command: 'exo', args: [], env: {}, hold: true, placeOnDemand: false, loadStallSeconds: 120 });
    await store.update({ exo: { command: '/Applications/EXO.app/Contents/Resources/exo/exo', args: ['-v'] } });
    await store.update({ exo: { start: true } });
    const updated = await store.update({ exo: { env: { EXO_OFFLINE: 'true' } } });
    expect(updated.exo).toEqual({
      url: null,
      start: true,
      apiPort: 52415,
      command: '/Applications/EXO.app/Contents/Resources/exo/exo',
      args: ['-v'],
      env: { EXO_OFFLINE: 'true' },
      hold: true,
      placeOnDemand: false,
      loadStallSeconds: 120,
    });
    await expect(store.update({ exo: { env: { 'NOT A NAME': 'x' } } })).rejects.toThrow(/Invalid settings: .*exo\.env/);
    expect((await loadSettings(dir, logger)).settings.exo).toEqual(updated.exo);
  });

  it('keeps the exo address (exo.url), null by default, and reads an older file without it', async () => {
    const store = await SettingsStore.open(dir, logger);
    expect(store.get().exo.url).toBeNull();
    const attached = await store.update({ exo: { url: 'http://127.0.0.1:52415' } });
    expect((await loadSettings(dir, logger)).settings.exo.url).toBe('http://127.0.0.1:52415');
    expect(attached.apiPort).toBe(defaultSettings().apiPort);
    await expect(store.update({ exo: { url: '' } })).rejects.toThrow(/Invalid settings/);
    expect((await store.update({ exo: { url: null } })).exo.url).toBeNull();
    await writeFile(file(), JSON.stringify({ apiPort: 6001 }));
    expect((await loadSettings(dir, logger)).settings).toMatchObject({ apiPort: 6001, exo: { url: null } });
  });

  it("keeps the sims' timing profile (runner.simProfile): none by default, a calibrated one by name, nothing else", async () => {
    const store = await SettingsStore.open(dir, logger);
    expect(store.get().runner.simProfile).toBeNull();
    const chosen = await store.update({ runner: { ...store.get().runner, simProfile: 'cpu-tiny' } });
    expect((await loadSettings(dir, logger)).settings.runner.simProfile).toBe('cpu-tiny');
    await expect(store.update({ runner: { ...chosen.runner, simProfile: 'gpu-huge' as never } })).rejects.toThrow(
      /Invalid settings: .*runner\.simProfile/,
    );
    expect(store.get().runner.simProfile).toBe('cpu-tiny');
  });

  it('surfaces the load warning of a corrupt file', async () => {
    await writeFile(file(), 'garbage');
    const store = await SettingsStore.open(dir, logger);
    expect(store.warning).toMatch(/not valid JSON/);
    expect(store.get()).toEqual(defaultSettings());
  });

  it('rejects invalid values and unknown keys, saving nothing', async () => {
    const store = await SettingsStore.open(dir, logger);
    await expect(store.update({ apiPort: 1e6 })).rejects.toThrow(/Invalid settings: .*apiPort/);
    await expect(store.update({ bogus: 1 } as never)).rejects.toThrow(/Unknown setting: bogus/);
    expect(store.get()).toEqual(defaultSettings());
    expect(await readdir(dir)).toEqual([]);
  });

  it('applies concurrent updates one after another without losing either', async () => {
    const store = await SettingsStore.open(dir, logger);
    await Promise.all([store.update({ apiPort: 6001 }), store.update({ startAtLogin: true }), store.update({ mlxPython: '/usr/bin/python3' })]);
    const onDisk = (await loadSettings(dir, logger)).settings;
    expect(onDisk).toMatchObject({ apiPort: 6001, startAtLogin: true, mlxPython: '/usr/bin/python3' });
    expect(await readdir(dir)).toEqual([SETTINGS_FILE]);
  });

  it('hands out copies', async () => {
    const store = await SettingsStore.open(dir, logger);
    store.get().safePair.small = 'changed';
    expect(store.get().safePair.small).toBe('sim/llama-3.2-1b');
  });
});
