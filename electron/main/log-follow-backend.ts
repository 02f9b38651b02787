/**
 * The popover's log view over IPC: the same sources and the same reading as the API's
 * `/api/logs` (core/logs), with each followed log's new lines pushed to the window on
 * LOG_LINES_CHANNEL under a stream id. Following stops when the page asks, and for
 * every stream at once when the page reloads (its streams are gone with it).
 */
import type { LogFollowStart } from '../../shared/ipc-channels';
import type { Snapshot } from '../../shared/snapshot';
import { followSource } from '../core/logs/log-follow';
import { listLogSources } from '../core/logs/log-sources';

export interface LogFollowBackendOptions {
  dataDir: string;
  /** exobar's own log file (the source `exobar`). */
  ownLog: string;
  snapshot(): Snapshot;
  /** exo's own log on this Mac (the source `exo:log`), when exobar can read it. */
  exoOwnLog?: () => string | null;
  /** Pushes `{ streamId, lines }` to the popover. */
  push(payload: { streamId: number; lines: string[] }): void;
}

export interface LogFollowBackend {
  followLog(source: string, lines: number): Promise<LogFollowStart>;
  unfollowLog(streamId: number): Promise<void>;
  /** Stops every stream (the page reloaded or the app quits). */
  stopAll(): void;
  /** Streams being followed now. */
  active(): number;
}

export function createLogFollowBackend(options: LogFollowBackendOptions): LogFollowBackend {
  const streams = new Map<number, () => void>();
  let nextId = 1;
  const sources = () => listLogSources(options.dataDir, options.snapshot(), { ownLog: options.ownLog, exoOwnLog: options.exoOwnLog });
  return {
    async followLog(sourceId, lines) {
      const listed = await sources();
      const source = listed.find((s) => s.id === sourceId);
      if (!source) {
        throw Object.assign(new Error(`No log "${sourceId}"; there are: ${listed.map((s) => s.id).join(', ') || 'none yet'}`), { code: 'log_not_found' });
      }
      const streamId = nextId++;
      const followed = await followSource(source, lines, (added) => options.push({ streamId, lines: added }));
      streams.set(streamId, followed.stop);
      return { streamId, title: source.title, lines: followed.lines };
    },
    async unfollowLog(streamId) {
      streams.get(streamId)?.();
      streams.delete(streamId);
    },
    stopAll() {
      for (const stop of streams.values()) stop();
      streams.clear();
    },
    active: () => streams.size,
  };
}
