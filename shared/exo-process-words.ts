/**
 * This Mac's exo in the words the tray, its tooltip and the popover show (one
 * vocabulary for every view). The state is shared/exo-process.ts's.
 */
import type { ExoProcessState, ExoProcessStatus } from './exo-process';

const LABELS: Record<ExoProcessStatus, string> = {
  idle: 'not started',
  starting: 'starting',
  running: 'running',
  stopping: 'stopping',
  crashed: 'crashed',
  restarting: 'restarting',
  needs_attention: 'needs attention',
  stopped: 'stopped',
};

/** "running", "needs attention", ... */
export function exoProcessStatusLabel(status: ExoProcessStatus): string {
  return LABELS[status];
}

/**
 * How bad it is: failed when exo is down and nothing brings it back on its own (a
 * crash with no restart scheduled, runners that could not be stopped), warn while a
 * crash restart is pending, busy while it starts or stops, ok when it runs or was
 * stopped on purpose.
 */
export function exoProcessTone(state: Pick<ExoProcessState, 'status' | 'restarts'>): 'ok' | 'busy' | 'warn' | 'failed' {
  switch (state.status) {
    case 'needs_attention':
      return 'failed';
    case 'crashed':
      return state.restarts.nextAt === null ? 'failed' : 'warn';
    case 'restarting':
      return 'warn';
    case 'starting':
    case 'stopping':
      return 'busy';
    default:
      return 'ok';
  }
}

/** One line: "running (pid 4242), fast synch off", "starting: waiting for exo's API", "crashed (exit code 1)". */
export function exoProcessSummary(state: ExoProcessState): string {
  const label = exoProcessStatusLabel(state.status);
  if ((state.status === 'starting' || state.status === 'stopping' || state.status === 'restarting') && state.progress) return `${label}: ${state.progress}`;
  if (state.status === 'running') {
    const fast = state.fastSynch ? `, fast synch ${state.fastSynch.enabled ? 'on' : 'off'}` : '';
    return `${label}${state.pid ? ` (pid ${state.pid})` : ''}${fast}`;
  }
  if ((state.status === 'crashed' || state.status === 'needs_attention') && state.exit) {
    return `${label} (${state.exit.signal ? `killed by ${state.exit.signal}` : `exit code ${state.exit.code ?? 'unknown'}`})`;
  }
  return label;
}
