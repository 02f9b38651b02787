/**
 * The stop sequence of the exo exobar spawned: SIGINT (exo's graceful shutdown), wait,
 * SIGTERM, wait, SIGKILL, then the runners it left behind. Leaves the status stopped, or
 * needs_attention when exo or a runner outlived the signals (the GPU may be wedged); as
 * it was when nothing ran.
 */
import { wedgedReason } from '../process/leftover-runners';
import type { ExoChild } from './exo-child';
import type { ExoProcessStateStore } from './exo-process-state-store';
import { seconds, type ExoTiming } from './exo-timing';

export interface ExoStopHost {
  store: ExoProcessStateStore;
  child: ExoChild;
  timing: ExoTiming;
  now: () => number;
  /** Ends in needs_attention with `reason` (no restart follows). */
  needsAttention(reason: string): void;
}

export async function stopExo(host: ExoStopHost): Promise<void> {
  const pid = host.child.pid;
  if (!host.child.running || pid === undefined) {
    const status = host.store.current.status;
    if (status === 'starting' || status === 'running' || status === 'restarting') {
      host.store.update({ status: 'stopped', reason: 'stopped by exobar', progress: null, pid: null });
    }
    return;
  }
  host.store.update({ status: 'stopping', progress: 'asking exo to stop (SIGINT)' });
  const last = await host.child.stop(
    [
      { signal: 'SIGINT', waitMs: host.timing.sigintGraceMs },
      { signal: 'SIGTERM', waitMs: host.timing.sigtermGraceMs },
      { signal: 'SIGKILL', waitMs: host.timing.sigkillWaitMs },
    ],
    (rung, previous) => host.store.update({ progress: `exo did not stop within ${seconds(previous.waitMs)} of ${previous.signal}: ${rung.signal}` }),
  );
  const how = last ?? 'SIGINT';
  host.child.stopScanning();
  const exit = await host.child.lastExit();
  host.store.update({ pid: null, exit: exit ? { code: exit.code, signal: exit.signal, at: host.now() } : host.store.current.exit });
  const leftovers = await host.child.stopLeftRunners();
  const wedged = wedgedReason(leftovers);
  if (host.child.running) return host.needsAttention(`exo (pid ${pid}) is still alive after SIGKILL`);
  if (wedged) return host.needsAttention(`exo stopped (${how}) and ${wedged}`);
  const stoppedRunners = leftovers.filter((r) => r.outcome === 'exited').length;
  host.store.update({
    status: 'stopped',
    failure: null,
    progress: null,
    reason: `stopped by exobar (${how}${how === 'SIGINT' ? ', graceful' : ''})${stoppedRunners > 0 ? `; ${stoppedRunners} runner${stoppedRunners > 1 ? 's' : ''} left behind stopped on SIGTERM` : ''}`,
  });
}
