/**
 * settings.json for the bundle: the settings in effect, with every value under a
 * secret-sounding name removed before the general redaction runs over the rest.
 * In a data directory the file is read as it is, never "repaired": the settings store
 * moves a corrupt file aside, which an export must not do.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SettingsSchema } from '../../../shared/api';

const SECRET_KEY = /token|secret|password|passwd|api[_-]?key|credential|private[_-]?key|auth/i;

/** Replaces the values of secret-named fields, at any depth; returns the values removed. */
export function stripSecretFields(value: unknown, removed: string[] = []): { value: unknown; removed: string[] } {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, child] of Object.entries(v as Record<string, unknown>)) {
        if (SECRET_KEY.test(k) && child !== null && typeof child !== 'boolean') {
          if (typeof child === 'string' && child !== '') removed.push(child);
          out[k] = '[redacted:secret]';
        } else {
          out[k] = walk(child);
        }
      }
      return out;
    }
    return v;
  };
  return { value: walk(value), removed };
}

export interface SettingsForBundle {
  /** Where they came from. */
  source: 'running app' | 'data directory' | 'none';
  /** True when they pass the settings schema. */
  valid: boolean;
  problem: string | null;
  settings: unknown;
}

/** Reads <dataDir>/settings.json without changing anything on disk. */
export async function readSettingsFile(dataDir: string): Promise<SettingsForBundle> {
  let text: string;
  try {
    text = await readFile(join(dataDir, 'settings.json'), 'utf8');
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    return { source: 'none', valid: missing, problem: missing ? 'no settings.json: defaults apply' : (error as Error).message, settings: null };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    // Unparsable: its text may hold anything, so only the fact goes in the bundle.
    return { source: 'data directory', valid: false, problem: `not valid JSON (${(error as Error).message})`, settings: null };
  }
  const parsed = SettingsSchema.safeParse(json);
  return {
    source: 'data directory',
    valid: parsed.success,
    problem: parsed.success ? null : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '),
    settings: json,
  };
}
