/**
 * The exo exobar runs is attached to as soon as its API answers: `exobar serve
 * --exo-start` alone shows the cluster, without `--exo`. The look for a local exo
 * to offer runs once at start, before the exo exobar starts can answer, so the
 * offer cannot cover it.
 */
import type { ExoProcessState } from '../../../../shared/exo-process';
import type { ExoAttachment } from './exo-attachment';

/** The address of the exo exobar runs on this Mac (it serves its API on loopback). */
export function startedExoUrl(state: Pick<ExoProcessState, 'apiPort'>): string {
  return `http://127.0.0.1:${state.apiPort}`;
}

/**
 * Attaches `attachment` to the exo `exoProcess` runs each time it becomes `running`
 * (readiness passed). Returns the unsubscribe function.
 */
export function attachStartedExo(
  exoProcess: { subscribe(listener: (state: ExoProcessState) => void): () => void },
  attachment: Pick<ExoAttachment, 'attachStarted'>,
  onError: (error: unknown) => void,
): () => void {
  let wasRunning = false;
  return exoProcess.subscribe((state) => {
    const running = state.status === 'running' && state.ownsProcess;
    // Only the step into running: progress updates while it runs need nothing.
    if (running && !wasRunning) void attachment.attachStarted(startedExoUrl(state)).catch(onError);
    wasRunning = running;
  });
}
