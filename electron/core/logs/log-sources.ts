/**
 * The logs an operator can follow: each runner's (its stderr, where the runner logs, and
 * its stdout, the protocol lines), exobar's own (its core's log, logs/own-log.ts) and exo's
 * when exobar runs it, all from the files the supervisor, the logger and the exo process
 * manager write in the data directory (`<dataDir>/logs/<instance>/{stderr,stdout}.log`,
 * `<dataDir>/exobar.log`, `<dataDir>/exo/exo-{stderr,stdout}.log`).
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { LogSourceInfo } from '../../../shared/logs';
import type { Snapshot } from '../../../shared/snapshot';
import { runnerLogDir } from '../diagnostics/log-tails';
import { exoLogDir } from '../exo-process/exo-logs';
import { ownLogPath } from './own-log';

/** A source as listed (shared/logs.ts), with the file it is read from. */
export type LogSource = LogSourceInfo & { path: string };

const SAFE_ID = /^[A-Za-z0-9_.:-]{1,200}$/;

async function size(path: string): Promise<number | null> {
  try {
    const info = await stat(path);
    return info.isFile() ? info.size : null;
  } catch {
    return null;
  }
}

export interface LogSourceOptions {
  /** exobar's own log file; default `<dataDir>/exobar.log` (ownLogPath). */
  ownLog?: string;
  /** exo's own log where exo keeps it on this Mac (attach mode reads it too); none when absent. */
  exoOwnLog?: () => string | null;
}

/** The sources with a file on disk now; runners named by the snapshot when it has them. */
export async function listLogSources(dataDir: string, snapshot: Snapshot, options: LogSourceOptions = {}): Promise<LogSource[]> {
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
  const ownLog = options.ownLog ?? ownLogPath(dataDir);
  const ownBytes = await size(ownLog);
  if (ownBytes !== null) sources.push({ id: 'exobar', title: 'exobar: its own log', kind: 'exobar', instanceId: null, bytes: ownBytes, path: ownLog });
  for (const [stream, id] of [
    ['stderr', 'exo'],
    ['stdout', 'exo:stdout'],
  ] as const) {
    const path = join(exoLogDir(dataDir), `exo-${stream}.log`);
    const bytes = await size(path);
    if (bytes !== null) sources.push({ id, title: `exo: ${stream}`, kind: 'exo', instanceId: null, bytes, path });
  }
  // exo's own log, when exo runs on this Mac (started by exobar or not) and exobar can read it.
  const exoOwn = options.exoOwnLog?.() ?? null;
  const exoOwnBytes = exoOwn ? await size(exoOwn) : null;
  if (exoOwn && exoOwnBytes !== null)
    sources.push({ id: 'exo:log', title: 'exo: its log on this Mac', kind: 'exo', instanceId: null, bytes: exoOwnBytes, path: exoOwn });
  return sources;
}
