/**
 * Settings persisted as `settings.json` in the data directory, validated with the
 * shared SettingsSchema on every load and save.
 *
 * A settings file must never keep the app from starting: a missing file means
 * defaults, and a corrupt or invalid one is moved aside (settings.json.corrupt-<time>,
 * so nothing the user wrote is lost), reported, and replaced by defaults. Writes go to
 * a temporary file that is then renamed over the old one, so a crash mid-write leaves
 * either the old settings or the new ones, never half a file.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import pino from 'pino';
import { z } from 'zod';
import { defaultSettings, SettingsSchema, type Settings } from '../../../shared/api';

export const SETTINGS_FILE = 'settings.json';

/** The logger calls the store makes; a pino logger fits. */
export type SettingsLogger = Pick<pino.Logger, 'warn' | 'info'>;

export interface LoadSettingsResult {
  settings: Settings;
  /** Why the file on disk was not used, in words; null when it was (or did not exist). */
  warning: string | null;
}

function defaultLogger(): SettingsLogger {
  return pino({ name: 'settings' }, pino.destination(2));
}

/**
 * Loads settings from `<dir>/settings.json`. Never throws for a bad file: a missing
 * one gives defaults; an unparsable or invalid one is kept as
 * `settings.json.corrupt-<timestamp>`, replaced by defaults, and reported as `warning`
 * (and logged).
 */
export async function loadSettings(dir: string, logger: SettingsLogger = defaultLogger()): Promise<LoadSettingsResult> {
  const file = join(dir, SETTINGS_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { settings: defaultSettings(), warning: null };
    // Unreadable (permissions, a directory in its place): use defaults for this run and leave it alone.
    const warning = `Could not read ${file} (${(err as Error).message}); using default settings.`;
    logger.warn({ file }, warning);
    return { settings: defaultSettings(), warning };
  }

  const problem = validate(text);
  if (problem.ok) return { settings: problem.settings, warning: null };

  const backup = `${file}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  let warning = `Settings file ${file} is ${problem.reason}; it was replaced by defaults`;
  try {
    await rename(file, backup);
    warning += ` and the old file kept as ${backup}.`;
  } catch (err) {
    warning += ` (the old file could not be kept: ${(err as Error).message}).`;
  }
  const settings = defaultSettings();
  try {
    await saveSettings(dir, settings);
  } catch (err) {
    warning += ` Writing the defaults failed: ${(err as Error).message}.`;
  }
  logger.warn({ file, backup }, warning);
  return { settings, warning };
}

function validate(text: string): { ok: true; settings: Settings } | { ok: false; reason: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, reason: `not valid JSON (${(err as Error).message})` };
  }
  const parsed = SettingsSchema.safeParse(json);
  if (!parsed.success) return { ok: false, reason: `invalid: ${z.prettifyError(parsed.error).replace(/\n+/g, '; ')}` };
  return { ok: true, settings: parsed.data };
}

/**
 * Validates and writes settings atomically: a temporary file in the same directory,
 * flushed to disk, then renamed over settings.json. Throws for invalid settings.
 */
export async function saveSettings(dir: string, settings: Settings): Promise<void> {
  const valid = SettingsSchema.parse(settings);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, SETTINGS_FILE);
  const tmp = `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  const handle = await open(tmp, 'w', 0o600);
  try {
    await handle.writeFile(`${JSON.stringify(valid, null, 2)}\n`, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(tmp, file);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
}

/** A change to some settings; nested `safePair`, `exo` and `onDemand` may be given in part. */
export type SettingsPatch = Partial<Omit<Settings, 'safePair' | 'exo' | 'onDemand'>> & {
  safePair?: Partial<Settings['safePair']>;
  exo?: Partial<Settings['exo']>;
  onDemand?: Partial<Settings['onDemand']>;
};

/**
 * Settings of one data directory held in memory, with updates written through.
 * Updates are applied one after another, so two concurrent updates never lose each other.
 */
export class SettingsStore {
  private current: Settings;
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly dir: string,
    loaded: LoadSettingsResult,
  ) {
    this.current = loaded.settings;
    this.warning = loaded.warning;
  }

  /** Why the file on disk was not used when the store opened; null when it was. */
  readonly warning: string | null;

  /** Loads `<dir>/settings.json` (see {@link loadSettings}); never throws for a bad file. */
  static async open(dir: string, logger?: SettingsLogger): Promise<SettingsStore> {
    return new SettingsStore(dir, await loadSettings(dir, logger));
  }

  /** The current settings (a copy: changing it changes nothing). */
  get(): Settings {
    return structuredClone(this.current);
  }

  /**
   * Applies a patch, validates the result, saves it and returns it. Unknown keys and
   * invalid values throw an Error naming the field, and nothing is saved.
   */
  update(patch: SettingsPatch): Promise<Settings> {
    const run = this.queue.then(async () => {
      const unknown = Object.keys(patch).filter((k) => !(k in SettingsSchema.shape));
      if (unknown.length > 0) throw new Error(`Unknown setting${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`);
      const merged = {
        ...this.current,
        ...patch,
        safePair: { ...this.current.safePair, ...patch.safePair },
        exo: { ...this.current.exo, ...patch.exo },
        onDemand: { ...this.current.onDemand, ...patch.onDemand },
      };
      const parsed = SettingsSchema.safeParse(merged);
      if (!parsed.success) throw new Error(`Invalid settings: ${z.prettifyError(parsed.error).replace(/\n+/g, '; ')}`);
      await saveSettings(this.dir, parsed.data);
      this.current = parsed.data;
      return this.get();
    });
    this.queue = run.catch(() => undefined);
    return run;
  }
}
