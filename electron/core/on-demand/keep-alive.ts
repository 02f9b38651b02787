/**
 * A request's `keep_alive`, as Ollama takes it: seconds as a number, or a duration
 * ("10m", "1h30m", "45s", "300"); any negative value keeps the model loaded for good;
 * 0 unloads it as soon as the request ends. exobar turns it into the instance's idle
 * time to live (null: never), counted from the request's end.
 */
import { z } from 'zod';
import { MAX_TTL_SECONDS } from '../../../shared/residency';

const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600 };

/** Seconds, null for never; throws an Error in words for what is not a duration. */
export function parseKeepAlive(value: number | string): number | null {
  let seconds: number;
  if (typeof value === 'number') {
    seconds = value;
  } else {
    const text = value.trim();
    if (/^-?\d+(\.\d+)?$/.test(text)) seconds = Number(text);
    else {
      const negative = text.startsWith('-');
      const body = negative ? text.slice(1) : text;
      const parts = [...body.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
      if (parts.length === 0 || parts.map((p) => p[0]).join('') !== body) {
        throw new Error(`keep_alive "${value}" is not a duration: send seconds (300), a duration ("5m", "1h30m") or -1 to keep the model loaded`);
      }
      seconds = parts.reduce((sum, p) => sum + Number(p[1]) * UNIT_SECONDS[p[2]!]!, 0) * (negative ? -1 : 1);
    }
  }
  if (!Number.isFinite(seconds)) throw new Error('keep_alive must be a finite number of seconds, or -1 to keep the model loaded');
  if (seconds < 0) return null;
  return Math.min(Math.round(seconds), MAX_TTL_SECONDS);
}

/** The request body's `keep_alive` field: Ollama's number or duration string. */
export const KeepAliveSchema = z
  .union([z.number(), z.string().max(40)])
  .nullable()
  .optional();
