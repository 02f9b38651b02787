import { useEffect } from 'react';
import type { SafePairPlan } from '../../../../shared/api';
import { instanceLifecycle, type InstanceLifecycle } from '../../../../shared/instance-state';
import { acknowledging, launchAnywayOffers, type LaunchAnywayOffer } from '../../../../shared/launch-anyway';
import { fitSentence } from '../../../../shared/memory-words';
import { formatBytes } from '../../lib/format';
import { useActions, useExobar } from '../../store/store-context';
import { InstanceTypeWord, instanceTypeLabel } from '../common/instance-type-word';
import { ProgressBar } from '../common/progress-bar';

/** The badge of a model the launch reuses: its lifecycle state, so a loading model never reads "running". */
const STATE_BADGE: Record<InstanceLifecycle, { words: string; tone: string }> = {
  serving: { words: 'serving', tone: 'ok' },
  loading: { words: 'loading', tone: 'warn' },
  restarting: { words: 'restarting', tone: 'warn' },
  stopping: { words: 'stopping', tone: '' },
  failed: { words: 'failed', tone: 'bad' },
};

function PlanTable({ plan }: { plan: SafePairPlan }) {
  return (
    <ul className="plan" aria-label="Safe pair plan">
      {plan.models.map((m) => (
        <li key={m.model} className="plan-row" data-testid="plan-row">
          <div className="row">
            <strong>{m.modelName}</strong>
            {m.simulated && <span className="badge sim">simulated</span>}
            {m.alreadyRunning && (
              <span
                className={`badge ${STATE_BADGE[m.state ?? 'serving'].tone}`}
                data-testid="plan-state"
                title="This model has an instance already: the launch reuses it"
              >
                {STATE_BADGE[m.state ?? 'serving'].words}
              </span>
            )}
            <span className="spacer" />
            <span className="muted small tabular">{formatBytes(m.memoryBytes)}</span>
          </div>
          <div className="row small muted">
            <InstanceTypeWord type={m.instanceType} /> · fast synch {m.fastSynch ? 'on' : 'off'}
            {/* "ring · fast synch off — ring instance" said the type twice: the reason only when it adds something. */}
            {m.fastSynchReason === `${m.instanceType} instance`
              ? `, the rule for ${instanceTypeLabel(m.instanceType)} instances`
              : ` — ${m.fastSynchReason}`}
          </div>
        </li>
      ))}
    </ul>
  );
}

/**
 * "Launch anyway" past the gates the operator may pass (the fit check, here or per Mac
 * on exo; exo's fast-synch gate), each said with its risk; one button acknowledges them
 * all, as the tray menu's dialog does (shared/launch-anyway.ts).
 */
function LaunchAnyway({ offers, disabled, onLaunch }: { offers: LaunchAnywayOffer[]; disabled: boolean; onLaunch: () => void }) {
  return (
    <div className="launch-anyway" data-testid="launch-anyway">
      {offers.map((o) => (
        <p key={o.kind} className="small warn-text" data-testid={`launch-anyway-${o.kind}`}>
          <strong>{o.title}.</strong> {o.kind === 'memory' ? riskOf(o.detail) : o.detail}
        </p>
      ))}
      <button type="button" className="button wide" disabled={disabled} onClick={onLaunch}>
        Launch anyway
      </button>
    </div>
  );
}

/** The memory offer's detail repeats the blockers listed above it; the risk alone is new. */
function riskOf(detail: string): string {
  const at = detail.indexOf('Launching anyway');
  return at >= 0 ? detail.slice(at) : detail;
}

/**
 * The button's words once every model of the pair has an instance: the worst state
 * among them, so a pair with a failed model never reads "loading" (the card says why).
 */
export function reusedPairWords(models: SafePairPlan['models']): string {
  const named = (state: InstanceLifecycle) => models.filter((m) => (m.state ?? 'serving') === state).map((m) => m.modelName);
  const failed = named('failed');
  if (failed.length > 0) return `Safe pair failed: ${failed.join(' and ')}`;
  if (named('stopping').length > 0) return 'Safe pair stopping…';
  if (named('restarting').length > 0) return 'Safe pair restarting…';
  if (named('loading').length > 0) return 'Safe pair loading…';
  return 'Safe pair running';
}

/** The launch in progress (or its failure), from snapshot.launch. */
function LaunchStatus() {
  const launch = useExobar((s) => s.snapshot.launch);
  if (!launch || launch.state === 'done') return null;
  if (launch.state === 'failed') {
    return (
      <p className="failure" role="alert">
        Launch failed: {launch.error ?? launch.step}
      </p>
    );
  }
  const total = Math.max(1, launch.models.length);
  return (
    <div className="launch-progress" data-testid="launch-progress">
      <div className="row small">
        <span>{launch.step}</span>
        <span className="spacer" />
        <span className="muted tabular">
          {Math.min(launch.current + 1, total)} of {total}
        </span>
      </div>
      <ProgressBar value={launch.current} max={total} label="Safe pair launch" />
    </div>
  );
}

/**
 * The safe launch: a small and a medium model as two ring instances with fast synch off
 * (domain: ring instances must run with MLX_METAL_FAST_SYNCH=0 when they share a GPU).
 * Shows the plan before the one button, so nothing surprising happens on click.
 */
export function SafeLaunchPanel() {
  const { loadPlan, launchSafePair } = useActions();
  const plan = useExobar((s) => s.plan);
  const launching = useExobar((s) => s.busy.launch === true || s.snapshot.launch?.state === 'running');
  // Reload the preview whenever the running models, their lifecycle states or their
  // fast-synch values change ("already running" flags and states, reasons, free memory),
  // local or on the attached exo, and when a Mac joins or leaves the cluster (its free
  // memory is then in the plan or out of it): a model exo deleted is never "serving" here.
  const instanceKey = useExobar((s) =>
    s.snapshot.instances.map((i) => `${i.source}:${i.model}:${instanceLifecycle(i)}:${i.source === 'local' ? i.fastSynch.enabled : ''}`).join(','),
  );
  const macsKey = useExobar((s) => (s.snapshot.exo?.nodes ?? []).map((n) => n.nodeId).join(','));
  // ...and when exo finishes downloading a model: the pair on exo picks from the downloaded models.
  const downloadedKey = useExobar((s) =>
    (s.snapshot.exo?.nodes ?? []).flatMap((n) => n.downloads.filter((d) => d.status === 'completed').map((d) => `${n.nodeId}:${d.modelId}`)).join(','),
  );
  const received = useExobar((s) => s.received);
  // ...and when the MLX runtime or local models appear: the pair may then be two real models.
  const mlxKey = useExobar((s) => `${s.snapshot.mlx?.available ?? false}:${s.snapshot.mlx?.localModels ?? 0}`);

  useEffect(() => {
    if (received) void loadPlan();
  }, [instanceKey, macsKey, downloadedKey, mlxKey, received, loadPlan]);

  const p = plan.plan;
  const offers = p ? launchAnywayOffers(p) : null;
  const allRunning = p !== null && p.models.length > 0 && p.models.every((m) => m.alreadyRunning);
  return (
    <section className="panel safe-launch" aria-label="Safe launch">
      <div className="row">
        <h2>Safe launch</h2>
        {plan.status === 'loading' && <span className="muted small">checking…</span>}
      </div>
      {plan.status === 'error' && (
        <p className="failure" role="alert">
          Could not get the plan: {plan.error}
        </p>
      )}
      {p && (
        <>
          <PlanTable plan={p} />
          <p className="small muted" data-testid="plan-memory">
            {p.fit && p.fit.neededBytes > 0
              ? `Memory: ${p.fit.summary}`
              : p.memory.requiredBytes > 0
                ? `Memory: ${fitSentence({ neededBytes: p.memory.requiredBytes, freeBytes: p.memory.freeBytes, headroomBytes: p.memory.headroomBytes })}`
                : `Memory: nothing more to load (${freeWords(p.memory)})`}
          </p>
          {p.blockers.length > 0 && (
            <ul className="blockers" aria-label="Blockers">
              {p.blockers.map((b) => (
                <li key={b} className="failure">
                  {b}
                </li>
              ))}
            </ul>
          )}
        </>
      )}
      <LaunchStatus />
      <button
        type="button"
        className="button primary wide"
        disabled={launching || !p || !p.canRun || allRunning || (offers?.length ?? 0) > 0}
        onClick={() => void launchSafePair()}
      >
        {launching ? 'Launching…' : allRunning ? reusedPairWords(p.models) : 'Launch safe pair'}
      </button>
      {offers && offers.length > 0 && !allRunning && (
        <LaunchAnyway offers={offers} disabled={launching} onLaunch={() => void launchSafePair(acknowledging(offers))} />
      )}
    </section>
  );
}

/** "22.5 GiB free", or on an exo cluster each Mac's own: "studio-a 22.5 GiB free, studio-b 22.5 GiB free". */
function freeWords(memory: SafePairPlan['memory']): string {
  if (!memory.byMac || memory.byMac.length === 0) return `${formatBytes(memory.freeBytes)} free`;
  return memory.byMac.map((m) => `${m.label} ${formatBytes(m.freeBytes)} free`).join(', ');
}
