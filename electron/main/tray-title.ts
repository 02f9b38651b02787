/**
 * The menu bar title beside the icon, by the `menuBarTitle` setting: the number of
 * models serving and the latest time to first token ("2 · 0.38s", `ttft`), or the
 * tokens per second they generate now ("2 · 41 tok/s", `tokens_per_second`), or no title
 * (`nothing`); then "exo running" while exobar runs this Mac's exo (not with `nothing`).
 * And the menu's "Menu bar title" entry that sets it. Pure: tested without Electron.
 */
import type { MenuItemConstructorOptions } from 'electron';
import type { MenuBarTitle } from '../../shared/api';
import { exoProcessStatusLabel } from '../../shared/exo-process-words';
import { exoUnreachable, instanceLifecycle, instancesSeenNow } from '../../shared/instance-state';
import type { Snapshot, TtftSample } from '../../shared/snapshot';
import { formatSeconds } from '../../shared/status-words';

/** The most recent TTFT sample across all instances. */
export function latestTtft(snapshot: Snapshot): TtftSample | null {
  let latest: TtftSample | null = null;
  for (const instance of snapshot.instances) {
    const sample = instance.ttft.latest;
    if (sample && (!latest || sample.at > latest.at)) latest = sample;
  }
  return latest;
}

/** The tokens per second every instance generates now, summed; null when none has a sample. */
export function totalTokensPerSecond(snapshot: Snapshot): number | null {
  const rates = snapshot.instances.map((i) => i.tokensPerSecond).filter((r): r is number => r !== null);
  return rates.length === 0 ? null : rates.reduce((sum, r) => sum + r, 0);
}

/** "41 tok/s", "7.5 tok/s": whole numbers from 10 up, where a decimal would only flicker. */
export function formatTokensPerSecond(rate: number): string {
  return `${rate >= 10 ? Math.round(rate) : rate.toFixed(1)} tok/s`;
}

/** The title for this snapshot and setting; empty when nothing runs (or the setting says nothing). */
export function menuBarTitleText(snapshot: Snapshot, mode: MenuBarTitle): string {
  if (mode === 'nothing') return '';
  // exo's last-seen models are not counted once exo stops answering: the title says so instead.
  const seen = instancesSeenNow(snapshot);
  const serving = seen.filter((i) => instanceLifecycle(i) === 'serving').length;
  let title = '';
  if (seen.length > 0) {
    const ttft = latestTtft(snapshot);
    const rate = totalTokensPerSecond(snapshot);
    const figure = mode === 'ttft' ? (ttft ? formatSeconds(ttft.totalMs) : null) : rate !== null ? formatTokensPerSecond(rate) : null;
    title = figure ? `${serving} · ${figure}` : `${serving}`;
  }
  // This Mac's exo at a glance, while exobar runs it (a stop on purpose needs no glance;
  // idle, never started, is not in a core's snapshot).
  const exo = snapshot.exoProcess?.status === 'idle' ? null : (snapshot.exoProcess ?? null);
  if (exo && exo.status !== 'stopped') title = [title, `exo ${exoProcessStatusLabel(exo.status)}`].filter(Boolean).join(' · ');
  if (exoUnreachable(snapshot)) title = [title, 'exo unreachable'].filter(Boolean).join(' · ');
  return title;
}

export const MENU_BAR_TITLE_LABEL = 'Menu bar title';

/** The choices' labels, in the menu's order. */
export const MENU_BAR_TITLE_CHOICES: ReadonlyArray<{ mode: MenuBarTitle; label: string }> = [
  { mode: 'ttft', label: 'Time to first token (TTFT)' },
  { mode: 'tokens_per_second', label: 'Tokens per second (tokens/s)' },
  { mode: 'nothing', label: 'Nothing' },
];

/** The "Menu bar title" submenu: one radio item per choice, the current one checked. */
export function menuBarTitleMenu(current: MenuBarTitle, set: (mode: MenuBarTitle) => void): MenuItemConstructorOptions {
  return {
    id: 'menu-bar-title',
    label: MENU_BAR_TITLE_LABEL,
    submenu: MENU_BAR_TITLE_CHOICES.map(({ mode, label }) => ({
      id: `menu-bar-title:${mode}`,
      label,
      type: 'radio',
      checked: mode === current,
      click: () => set(mode),
    })),
  };
}
