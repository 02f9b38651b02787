/**
 * The tray's glance at models exo took away, in a few words for the exo line:
 * "2 lost: tiny-llama and tiny-llama-b (studio-b left at 15:26)". An operator who sees
 * "0 models" also sees why.
 */
import type { Snapshot } from '../../shared/snapshot';

/** The lost models' words, or null when none is lost. */
export function exoLostGlance(snapshot: Snapshot): string | null {
  const lost = snapshot.warnings.filter((w) => w.code === 'exo_model_lost' && w.model);
  if (lost.length === 0) return null;
  const names = lost.map((w) => w.model!.split('/').pop() ?? w.model!);
  const named = names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
  // The title reads "<name> was lost: <why>[ (placed again, loading)]"; each reason once.
  const reasons = [...new Set(lost.map((w) => / was lost: (.*?)(?: \(placed again, loading\))?$/.exec(w.title)?.[1] ?? ''))].filter(Boolean);
  return `${lost.length} lost: ${named}${reasons.length > 0 ? ` (${reasons.join('; ')})` : ''}`;
}
