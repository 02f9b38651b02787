/**
 * This Mac's exo as exobar runs it (docs/exo-process.md): its own state (starting,
 * running, stopping, crashed, needs attention) with the reason in words, the
 * fast-synch value exobar gave it, exo's last lines when it failed, and Start, Stop
 * and a Restart that first says, in words, what a restart deletes. Hidden while
 * exobar has not started exo (the snapshot's `exoProcess` is null).
 */
import { useState } from 'react';
import type { ExoProcessState } from '../../../../shared/exo-process';
import { exoProcessSummary, exoProcessTone } from '../../../../shared/exo-process-words';
import { exoInstances } from '../../../../shared/instance-state';
import type { InstanceSnapshot } from '../../../../shared/snapshot';
import { useActions, useExobar } from '../../store/store-context';

const DOT = { ok: 'tone-ok', busy: 'tone-busy', warn: 'tone-warn', failed: 'tone-bad' } as const;

/** The attached cluster's instances with a runner on this Mac's exo: what a restart deletes. */
function spanningThisMac(instances: readonly InstanceSnapshot[], nodeId: string | null): string[] {
  if (!nodeId) return [];
  return exoInstances({ instances: [...instances] })
    .filter((i) => i.exo.runners.some((r) => r.nodeId === nodeId))
    .map((i) => i.modelName);
}

function FastSynchLine({ fastSynch }: { fastSynch: NonNullable<ExoProcessState['fastSynch']> }) {
  const word = (on: boolean) => (on ? 'on' : 'off');
  return (
    <div className="small" data-testid="exo-process-fast-synch">
      <span>
        Fast synch {word(fastSynch.enabled)}, set by exobar: {fastSynch.reason}
      </span>
      {fastSynch.mismatch && fastSynch.observed !== null && (
        <span className="failure"> · exo&apos;s own log says {word(fastSynch.observed).toUpperCase()}</span>
      )}
    </div>
  );
}

function ConfirmRestart({ spanning, onConfirm, onCancel, busy }: { spanning: string[]; onConfirm: () => void; onCancel: () => void; busy: boolean }) {
  return (
    <div className="exo-process-confirm" role="alertdialog" aria-label="Restart exo?" data-testid="exo-process-confirm">
      <p className="small">
        Restart exo on this Mac? A restart deletes every instance that spans this Mac (exo removes the instances of a node that left the cluster)
        {spanning.length > 0 ? `: ${spanning.join(', ')}.` : '. No instance spans this Mac now.'} Requests running on them end.
      </p>
      <div className="row small">
        <button type="button" className="button small danger" disabled={busy} onClick={onConfirm}>
          {busy ? 'Restarting…' : 'Restart exo and delete them'}
        </button>
        <button type="button" className="button small" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </div>
  );
}

export function ExoProcessStatus() {
  const state = useExobar((s) => s.snapshot.exoProcess ?? null);
  const instances = useExobar((s) => s.snapshot.instances);
  const busy = useExobar((s) => s.busy['exo-process'] === true);
  const { controlExoProcess } = useActions();
  const [confirming, setConfirming] = useState(false);
  // idle (never started) is null in a core's snapshot; either way there is nothing to show.
  if (!state || state.status === 'idle') return null;

  const tone = exoProcessTone(state);
  const down = state.status === 'crashed' || state.status === 'needs_attention' || state.status === 'stopped';
  const running = state.status === 'running';
  const failed = tone === 'failed' || state.status === 'restarting';
  return (
    <section className="exo-process panel" data-testid="exo-process" data-status={state.status} aria-label="This Mac's exo">
      <div className="row small">
        <span className={`dot ${DOT[tone]}`} aria-hidden="true" />
        <span className="label">This Mac&apos;s exo</span>
        <span data-testid="exo-process-summary">{exoProcessSummary(state)}</span>
      </div>
      {state.fastSynch && (running || state.status === 'starting') && <FastSynchLine fastSynch={state.fastSynch} />}
      {state.reason && (
        <p className={`small ${failed ? 'failure' : 'muted'}`} role={tone === 'failed' ? 'alert' : undefined} data-testid="exo-process-reason">
          {state.reason}
        </p>
      )}
      {state.status === 'restarting' && state.restarts.nextAt !== null && (
        <p className="small muted" data-testid="exo-process-restarts">
          Automatic restart {state.restarts.count} of {state.restarts.max}
        </p>
      )}
      {state.restartNeeded && (
        <p className="small" data-testid="exo-process-restart-needed">
          {state.restartNeeded.message}
        </p>
      )}
      {failed && state.lastLines.length > 0 && (
        <pre className="output-tail" aria-label="exo's last lines" data-testid="exo-process-last-lines">
          {state.lastLines.slice(-12).join('\n')}
        </pre>
      )}
      {confirming && running ? (
        <ConfirmRestart
          spanning={spanningThisMac(instances, state.nodeId)}
          busy={busy}
          onCancel={() => setConfirming(false)}
          onConfirm={() => void controlExoProcess({ action: 'restart', consent: true }).then(() => setConfirming(false))}
        />
      ) : (
        <div className="row small">
          {down && (
            <button type="button" className="button small primary" disabled={busy} onClick={() => void controlExoProcess({ action: 'start' })}>
              {state.status === 'needs_attention' ? 'Start exo again' : 'Start exo'}
            </button>
          )}
          {running && (
            <button type="button" className="button small" disabled={busy} onClick={() => setConfirming(true)}>
              Restart…
            </button>
          )}
          {(running || state.status === 'starting' || state.status === 'restarting') && (
            <button type="button" className="button small" disabled={busy} onClick={() => void controlExoProcess({ action: 'stop' })}>
              Stop exo
            </button>
          )}
        </div>
      )}
    </section>
  );
}
