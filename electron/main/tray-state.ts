/**
 * What the menu-bar icon shows, as a pure function of the snapshot: which glyph,
 * the short title beside it and the tooltip in words. Tested without Electron.
 */
import type { Snapshot, TtftSample } from '../../shared/snapshot';
import { exoProcessStatusLabel, exoProcessSummary, exoProcessTone } from '../../shared/exo-process-words';
import { exoLostGlance } from './exo-lost-glance';
import { exoInstances, instanceLifecycle, isServing, lifecycleSummary } from '../../shared/instance-state';
import { formatSeconds, instanceStatusWords, plural } from '../../shared/status-words';
import { residencyGlance } from '../../shared/residency-glance';

export const TRAY_STATES = ['idle', 'serving', 'prefilling', 'warning', 'failed'] as const;
export type TrayState = (typeof TRAY_STATES)[number];

export interface TrayView {
  state: TrayState;
  /** Beside the icon on macOS: "2 · 0.38s" (models serving · latest TTFT), then "exo running" while exobar runs this Mac's exo; empty when nothing runs. */
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
  const exoTone = snapshot.exoProcess ? exoProcessTone(snapshot.exoProcess) : null;
  const states = snapshot.instances.map(instanceLifecycle);
  if (states.includes('failed') || snapshot.launch?.state === 'failed' || exoTone === 'failed') return 'failed';
  if (snapshot.warnings.length > 0 || exoTone === 'warn') return 'warning';
  if (snapshot.instances.some((i) => i.prefill !== null)) return 'prefilling';
  // A model still loading is not serving yet: the glyph stays idle, the tooltip says "loading".
  if (states.includes('serving')) return 'serving';
  return 'idle';
}

/** Everything the tray shows for this snapshot. */
export function trayViewOf(snapshot: Snapshot): TrayView {
  const state = trayStateOf(snapshot);
  const serving = snapshot.instances.filter((i) => instanceLifecycle(i) === 'serving').length;
  const ttft = latestTtft(snapshot);

  let title = '';
  if (snapshot.instances.length > 0) title = ttft ? `${serving} · ${formatSeconds(ttft.totalMs)}` : `${serving}`;
  // This Mac's exo at a glance, while exobar runs it (a stop on purpose needs no glance;
  // idle, never started, is not in a core's snapshot).
  const exo = snapshot.exoProcess?.status === 'idle' ? null : (snapshot.exoProcess ?? null);
  if (exo && exo.status !== 'stopped') title = [title, `exo ${exoProcessStatusLabel(exo.status)}`].filter(Boolean).join(' · ');

  const lines: string[] = [];
  if (snapshot.instances.length === 0) lines.push('exobar: no models running');
  else lines.push(`exobar: ${plural(snapshot.instances.length, 'model')}: ${lifecycleSummary(snapshot.instances)}`);
  if (ttft) lines.push(`Latest time to first token ${formatSeconds(ttft.totalMs)}`);
  if (snapshot.exo) lines.push(exoLine(snapshot));
  for (const instance of snapshot.instances) {
    if (instance.prefill) {
      const { processedTokens, totalTokens } = instance.prefill;
      lines.push(`${instance.modelName} prefilling ${processedTokens.toLocaleString('en-US')}/${totalTokens.toLocaleString('en-US')} tokens`);
    }
    // Failed, loading, restarting and stopping instances are named with their runner's words.
    if (instanceLifecycle(instance) !== 'serving') lines.push(`${instance.modelName}: ${instanceStatusWords(instance)}`);
    // Whether a serving local model stays loaded: "loaded · unloads in 4 min", "pinned".
    else if (instance.source === 'local') lines.push(`${instance.modelName}: ${residencyGlance(instance, snapshot.at)}`);
  }
  if (snapshot.launch?.state === 'failed') lines.push(`Launch failed: ${snapshot.launch.error ?? snapshot.launch.step}`);
  if (exo) {
    lines.push(`This Mac's exo: ${exoProcessSummary(exo)}`);
    if (exoProcessTone(exo) === 'failed' && exo.reason) lines.push(exo.reason);
  }
  for (const warning of snapshot.warnings) lines.push(`Warning: ${warning.title}`);
  return { state, title, tooltip: lines.join('\n') };
}

/** The attached exo in one line: "exo at URL: 2 Macs, 3 models (2 serving)", or since when it does not answer. */
function exoLine(snapshot: Snapshot): string {
  const exo = snapshot.exo!;
  if (!exo.connected) return `exo at ${exo.url}: not reachable since ${new Date(exo.since).toLocaleTimeString('en-GB', { hour12: false })}`;
  const models = exoInstances(snapshot);
  const lost = exoLostGlance(snapshot);
  return `exo at ${exo.url}: ${plural(exo.nodes.length, 'Mac')}, ${plural(models.length, 'model')} (${models.filter(isServing).length} serving)${lost ? `, ${lost}` : ''}`;
}
