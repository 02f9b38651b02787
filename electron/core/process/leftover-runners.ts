/**
 * Runners exo leaves behind. exo's runners are its child processes; after a forced
 * stop or a crash they outlive it and can hold GPU memory until reboot. exobar
 * records them by pid and start time while exo runs, and afterwards stops each one
 * that is still the same process (never by name, never a pid whose start time
 * differs): SIGTERM, wait, SIGKILL, wait. A runner that ignored SIGTERM was most
 * likely stuck in a GPU wait, and killing such a process may not free the GPU: that
 * is reported, and exobar does not restart exo on top of it.
 */
import { processStartTime, sendSignal, type ProcessIdentity } from './process-identity';

/**
 * gone: not running any more (or never the same process). reused: the pid now belongs
 * to another process (start time differs), left alone. exited: stopped on SIGTERM.
 * killed: ignored SIGTERM, gone after SIGKILL. survived: still there after SIGKILL.
 */
export type LeftoverOutcome = 'gone' | 'reused' | 'exited' | 'killed' | 'survived';

export interface LeftoverResult {
  pid: number;
  outcome: LeftoverOutcome;
}

export interface LeftoverTiming {
  termGraceMs: number;
  killWaitMs: number;
  pollMs: number;
}

async function goneWithin(identity: ProcessIdentity, ms: number, pollMs: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if ((await processStartTime(identity.pid)) !== identity.startTime) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

async function stopOne(identity: ProcessIdentity, timing: LeftoverTiming): Promise<LeftoverResult> {
  const now = await processStartTime(identity.pid);
  if (now === null) return { pid: identity.pid, outcome: 'gone' };
  if (now !== identity.startTime) return { pid: identity.pid, outcome: 'reused' };
  sendSignal(identity.pid, 'SIGTERM');
  if (await goneWithin(identity, timing.termGraceMs, timing.pollMs)) return { pid: identity.pid, outcome: 'exited' };
  // Same process still (checked just now): SIGKILL cannot hit a newcomer that reused the pid.
  sendSignal(identity.pid, 'SIGKILL');
  if (await goneWithin(identity, timing.killWaitMs, timing.pollMs)) return { pid: identity.pid, outcome: 'killed' };
  return { pid: identity.pid, outcome: 'survived' };
}

/** Stops every recorded runner that is still the same process; one result per record. */
export function stopLeftovers(records: readonly ProcessIdentity[], timing: LeftoverTiming): Promise<LeftoverResult[]> {
  return Promise.all(records.map((record) => stopOne(record, timing)));
}

/** Why the GPU may be wedged after these results, in words; null when every runner stopped on SIGTERM (or was gone). */
export function wedgedReason(results: readonly LeftoverResult[]): string | null {
  const survived = results.filter((r) => r.outcome === 'survived').map((r) => r.pid);
  const killed = results.filter((r) => r.outcome === 'killed').map((r) => r.pid);
  if (survived.length === 0 && killed.length === 0) return null;
  const parts: string[] = [];
  if (survived.length > 0) {
    parts.push(
      `runner${survived.length > 1 ? 's' : ''} ${survived.map((p) => `pid ${p}`).join(', ')} still alive after SIGKILL (stuck in the kernel, typically in a GPU wait)`,
    );
  }
  if (killed.length > 0) {
    parts.push(
      `runner${killed.length > 1 ? 's' : ''} ${killed.map((p) => `pid ${p}`).join(', ')} ignored SIGTERM and had to be killed (SIGKILL), which may not free the GPU`,
    );
  }
  return `the GPU may be wedged: exo left ${parts.join('; ')}. Check Activity Monitor for GPU use and memory held; reboot the Mac if it stays busy, then start exo again`;
}
