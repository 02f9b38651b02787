/**
 * `slower_than_usual` as an active warning: the history's verdict per model (its TTFT
 * p50 over the last hour against its 7-day median at similar load) read again each
 * minute by the history's warning provider, so it shows where every warning shows (the snapshot, the
 * page's banners, the tray, the `exobar_warnings_active` gauge), with both figures, and
 * clears by itself once the last hour is back within the band.
 */
import type { SlowerThanUsual } from '../../../shared/history';
import type { Snapshot, Warning } from '../../../shared/snapshot';
import type { SnapshotSections } from '../app-state/snapshot-hub';
import type { History } from './history';

/** The history moves by the minute: reading it again each minute is enough. */
export const SLOWER_CHECK_MS = 60_000;

/** The warning for one model's verdict; its instances are those serving the model now (local or exo). */
export function slowerThanUsualWarning(verdict: SlowerThanUsual, snapshot: Pick<Snapshot, 'instances'>): Warning {
  return {
    code: 'slower_than_usual',
    instanceIds: snapshot.instances.filter((i) => i.model === verdict.model).map((i) => i.id),
    model: verdict.model,
    title: `${verdict.model} is slower than usual: TTFT p50 ${verdict.lastHourP50Ms} ms over the last hour, against ${verdict.usualP50Ms} ms usually`,
    risk: `${verdict.message}. Something changed: an update of the engine or of exo, another model sharing the GPU, longer prompts, or a Mac under other load.`,
    fix: 'Open History to see when it began, and the Requests view for the requests since; compare with what changed then.',
  };
}

/** Every model's `slower_than_usual` warning now. */
export function slowerThanUsualWarnings(history: Pick<History, 'query'>, snapshot: Pick<Snapshot, 'instances'>): Warning[] {
  return history
    .query('1h')
    .models.flatMap((m) => (m.slowerThanUsual ? [m.slowerThanUsual] : []))
    .map((verdict) => slowerThanUsualWarning(verdict, snapshot));
}

/**
 * Registers the history's warning provider with the hub and reads the verdicts now and
 * every `everyMs`, naming the instances `views` shows then; returns the stop (the warnings go with it).
 */
export function watchSlowerThanUsual(
  history: Pick<History, 'query'>,
  views: { snapshot(): Pick<Snapshot, 'instances'> },
  hub: SnapshotSections,
  everyMs = SLOWER_CHECK_MS,
): () => void {
  let shown: Warning[] = [];
  const provider = hub.warnings('history', () => shown);
  let last = '';
  const check = () => {
    const next = slowerThanUsualWarnings(history, views.snapshot());
    // Only a change is a new snapshot version.
    const key = JSON.stringify(next);
    if (key === last) return;
    last = key;
    shown = next;
    provider.changed();
  };
  check();
  const timer = setInterval(check, everyMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    provider.remove();
  };
}
