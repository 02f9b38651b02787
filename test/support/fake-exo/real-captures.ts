/**
 * The captures from a real exo node (exo 0.3.70) in test/fixtures/exo/real/, for tests
 * that hold exobar and the fake exo to what exo really sends (see its README).
 */
import { readFileSync } from 'node:fs';
import { FIXTURE_DIR, type Json } from './fixture-data';

export const REAL_DIR = `${FIXTURE_DIR}real/`;

/** The real `/state` captures, by name. */
export const REAL_STATES = ['state-loading.json', 'state-ready.json', 'state-after-cancel-ghost.json', 'state-after-delete.json'] as const;

/** A real capture as text, raw bytes as received. */
export function readRealText(name: string): string {
  return readFileSync(`${REAL_DIR}${name}`, 'utf8');
}

/** A real JSON capture (a fresh copy on every call). */
export function readReal(name: string): Json {
  return JSON.parse(readRealText(name)) as Json;
}
