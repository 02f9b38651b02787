/**
 * What the menu-bar icon shows, as a pure function of the snapshot: which glyph,
 * the short title beside it and the tooltip in words. Tested without Electron.
 */
import { formatClock } from '../../shared/time-words';
import type { MenuBarTitle } from '../../shared/api';
import type { Snapshot } from '../../shared/snapshot';
import { exoProcessSummary, exoProcessTone } from '../../shared/exo-process-words';
import { latestTtft, menuBarTitleText } from './tray-title';
import { exoLostGlance } from './exo-lost-glance';
import { exoInstances, exoUnreachable, instanceLifecycle, instancesSeenNow, isServing, lifecycleSummary } from '../../shared/instance-state';
import { formatSeconds, instanceStatusWords, plural } from '../../shared/status-words';
import { residencyGlance } from '../../shared/residency-glance';

export const TRAY_STATES = ['idle', 'serving', 'prefilling', 'warning', 'failed'] as const;
export type TrayState = (typeof TRAY_STATES)[number];

export interface TrayView {
  state: TrayState;
  /** Beside the icon on macOS, by the `menuBarTitle` setting (tray-title.ts): "2 · 0.38s", "2 · 41 tok/s" or nothing; empty when nothing runs. */
  title: string;
  tooltip: string;
}

/**
 * The glyph, by priority: a failed runner or launch beats a warning (the operator
 * must act), a warning beats activity, a prefill in progress beats plain serving.
 */
export function trayStateOf(snapshot: Snapshot): TrayState {
  const exoTone = snapshot.exoProcess ? exoProcessTone(snapshot.exoProcess) : null;
  // exo's last-seen instances say nothing once exo stops answering (its warning says so).
  const states = instancesSeenNow(snapshot).map(instanceLifecycle);
  if (states.includes('failed') || snapshot.launch?.state === 'failed' || exoTone === 'failed') return 'failed';
  if (snapshot.warnings.length > 0 || exoTone === 'warn') return 'warning';
  if (snapshot.instances.some((i) => i.prefill !== null)) return 'prefilling';
  // A model still loading is not serving yet: the glyph stays idle, the tooltip says "loading".
  if (states.includes('serving')) return 'serving';
  return 'idle';
}

/** Everything the tray shows for this snapshot. */
export function trayViewOf(snapshot: Snapshot, titleMode: MenuBarTitle = 'ttft'): TrayView {
  const state = trayStateOf(snapshot);
  const ttft = latestTtft(snapshot);
  const title = menuBarTitleText(snapshot, titleMode);
  const exo = snapshot.exoProcess?.status === 'idle' ? null : (snapshot.exoProcess ?? null);

  const lines: string[] = [];
  // With exo unreachable its models are not counted (its line says since when it does not answer).
  const seen = instancesSeenNow(snapshot);
  const unreachable = exoUnreachable(snapshot) ? ' (exo unreachable)' : '';
  if (seen.length === 0) lines.push(`exobar: no models running${unreachable}`);
  else lines.push(`exobar: ${plural(seen.length, 'model')}: ${lifecycleSummary(seen)}${unreachable}`);
  if (ttft) lines.push(`Latest time to first token ${formatSeconds(ttft.totalMs)}`);
  if (snapshot.exo) lines.push(exoLine(snapshot));
  for (const instance of seen) {
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
  if (!exo.connected) return `exo at ${exo.url}: not reachable since ${formatClock(exo.since)}`;
  const models = exoInstances(snapshot);
  const lost = exoLostGlance(snapshot);
  return `exo at ${exo.url}: ${plural(exo.nodes.length, 'Mac')}, ${plural(models.length, 'model')} (${models.filter(isServing).length} serving)${lost ? `, ${lost}` : ''}`;
}
