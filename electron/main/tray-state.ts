/**
 * What the menu-bar icon shows, as a pure function of the snapshot: which glyph,
 * the short title beside it and the tooltip in words. Tested without Electron.
 */
import type { Snapshot, TtftSample } from '../../shared/snapshot';
import { isFailed, isServing } from '../../shared/instance-state';
import { formatSeconds, instanceStatusWords, plural } from './status-words';

export const TRAY_STATES = ['idle', 'serving', 'prefilling', 'warning', 'failed'] as const;
export type TrayState = (typeof TRAY_STATES)[number];

export interface TrayView {
  state: TrayState;
  /** Beside the icon on macOS: "2 · 0.38s" (models serving · latest TTFT); empty when nothing runs. */
  title: string;
  tooltip: string;
}

/** The most recent TTFT sample across all instances. */
export function latestTtft(snapshot: Snapshot): TtftSample | null {
  let latest: TtftSample | null = null;
  for (const instance of snapshot.instances) {
    const sample = instance.ttft.latest;
    if (sample && (!latest || sample.at > latest.at)) latest = sample;
  }
  return latest;
}

/**
 * The glyph, by priority: a failed runner or launch beats a warning (the operator
 * must act), a warning beats activity, a prefill in progress beats plain serving.
 */
export function trayStateOf(snapshot: Snapshot): TrayState {
  if (snapshot.instances.some(isFailed) || snapshot.launch?.state === 'failed') return 'failed';
  if (snapshot.warnings.length > 0) return 'warning';
  if (snapshot.instances.some((i) => i.prefill !== null)) return 'prefilling';
  if (snapshot.instances.some(isServing)) return 'serving';
  return 'idle';
}

/** Everything the tray shows for this snapshot. */
export function trayViewOf(snapshot: Snapshot): TrayView {
  const state = trayStateOf(snapshot);
  const serving = snapshot.instances.filter(isServing).length;
  const ttft = latestTtft(snapshot);

  let title = '';
  if (snapshot.instances.length > 0) title = ttft ? `${serving} · ${formatSeconds(ttft.totalMs)}` : `${serving}`;

  const lines: string[] = [];
  if (snapshot.instances.length === 0) lines.push('exobar: no models running');
  else lines.push(`exobar: ${plural(serving, 'model')} serving of ${snapshot.instances.length}`);
  if (ttft) lines.push(`Latest time to first token ${formatSeconds(ttft.totalMs)}`);
  for (const instance of snapshot.instances) {
    if (instance.prefill) {
      const { processedTokens, totalTokens } = instance.prefill;
      lines.push(`${instance.modelName} prefilling ${processedTokens.toLocaleString('en-US')}/${totalTokens.toLocaleString('en-US')} tokens`);
    }
    if (isFailed(instance)) lines.push(`${instance.modelName}: ${instanceStatusWords(instance)}`);
  }
  if (snapshot.launch?.state === 'failed') lines.push(`Launch failed: ${snapshot.launch.error ?? snapshot.launch.step}`);
  for (const warning of snapshot.warnings) lines.push(`Warning: ${warning.title}`);
  return { state, title, tooltip: lines.join('\n') };
}
