/**
 * The logs an operator can follow: each runner's (its stderr, where the runner logs, and
 * its stdout, the protocol lines) and exo's when exobar runs it, all from the files the
 * supervisor and the exo process manager write in the data directory
 * (`<dataDir>/logs/<instance>/{stderr,stdout}.log`, `<dataDir>/exo/exo-{stderr,stdout}.log`).
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Snapshot } from '../../../shared/snapshot';
import { runnerLogDir } from '../diagnostics/log-tails';
import { exoLogDir } from '../exo-process/exo-logs';

export interface LogSource {
  /** What `GET /api/logs/{source}` takes: `<instance>` (its stderr), `<instance>:stdout`, `exo`, `exo:stdout`. */
  id: string;
  /** In words: "Llama 3.2 1B (simulated): runner log". */
  title: string;
  kind: 'runner' | 'exo';
  /** The instance a runner log belongs to; null for exo. */
  instanceId: string | null;
  /** Bytes in the file now. */
  bytes: number;
  path: string;
}

const SAFE_ID = /^[A-Za-z0-9_.:-]{1,200}$/;

async function size(path: string): Promise<number | null> {
  try {
    const info = await stat(path);
    return info.isFile() ? info.size : null;
  } catch {
    return null;
  }
}

/** The sources with a file on disk now; runners named by the snapshot when it has them. */
export async function listLogSources(dataDir: string, snapshot: Snapshot): Promise<LogSource[]> {
  const sources: LogSource[] = [];
  let instanceDirs: string[] = [];
  try {
    instanceDirs = (await readdir(join(dataDir, 'logs'), { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    instanceDirs = [];
  }
  for (const id of instanceDirs.filter((d) => SAFE_ID.test(d)).sort()) {
    const name = snapshot.instances.find((i) => i.id === id)?.modelName ?? id;
    for (const [stream, suffix, words] of [
      ['stderr', '', 'runner log'],
      ['stdout', ':stdout', 'runner protocol lines'],
    ] as const) {
      const path = join(runnerLogDir(dataDir, id), `${stream}.log`);
      const bytes = await size(path);
      if (bytes !== null) sources.push({ id: `${id}${suffix}`, title: `${name}: ${words}`, kind: 'runner', instanceId: id, bytes, path });
    }
  }
  for (const [stream, id] of [
    ['stderr', 'exo'],
    ['stdout', 'exo:stdout'],
  ] as const) {
    const path = join(exoLogDir(dataDir), `exo-${stream}.log`);
    const bytes = await size(path);
    if (bytes !== null) sources.push({ id, title: `exo: ${stream}`, kind: 'exo', instanceId: null, bytes, path });
  }
  return sources;
}
