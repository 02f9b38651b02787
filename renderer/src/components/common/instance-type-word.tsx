/**
 * An instance's type, "ring" or "JACCL", with what the word means in its tooltip. exo's
 * words stay (its docs and logs use them), but a new operator meets them on a card, in the
 * safe launch plan and on exo's cards: every place that shows the type uses this one
 * element, so none shows the bare word.
 */
import type { InstanceType } from '../../../../shared/instance-vocabulary';
import { JARGON } from '../../lib/jargon';

/** "ring" / "JACCL": the word exo's docs use. */
export function instanceTypeLabel(type: InstanceType): string {
  return type === 'ring' ? 'ring' : 'JACCL';
}

/** The type as a word with its explanation on hover and for screen readers (title). */
export function InstanceTypeWord({ type, badge = false }: { type: InstanceType; badge?: boolean }) {
  return (
    <span className={`${badge ? 'badge ' : ''}explained`} title={type === 'ring' ? JARGON.ring : JARGON.jaccl} data-testid="instance-type">
      {instanceTypeLabel(type)}
    </span>
  );
}
