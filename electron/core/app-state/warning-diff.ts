/**
 * The one merge point of the warnings every part raises (the node's own, the history's,
 * this Mac's exo process, the attached exo's) and the one diff that records them: a
 * warning that appears is `warning_raised`, one that goes is `warning_cleared`, whatever
 * part raised it, so the event log (and the diagnosis that reads it) sees exo's warnings
 * as it sees the local ones. A warning is the same one while its code and instances are.
 */
import type { Warning } from '../../../shared/snapshot';

/** What the diff records: the node event log's warning events. */
export type WarningEvent = { kind: 'warning_raised'; data: WarningData } | { kind: 'warning_cleared'; data: WarningData };

interface WarningData {
  code: Warning['code'];
  instanceIds: string[];
}

const keyOf = (w: Warning) => `${w.code}:${w.instanceIds.join(',')}`;

export class WarningDiff {
  private current: Warning[] = [];

  constructor(private readonly record: (event: WarningEvent) => void) {}

  /** The warnings now, in the order their parts gave them. */
  get warnings(): readonly Warning[] {
    return this.current;
  }

  /** Takes every part's warnings now and records what was raised and what cleared since the last call. */
  update(next: readonly Warning[]): void {
    const before = new Set(this.current.map(keyOf));
    const after = new Set(next.map(keyOf));
    for (const w of next) if (!before.has(keyOf(w))) this.record({ kind: 'warning_raised', data: { code: w.code, instanceIds: w.instanceIds } });
    for (const w of this.current) if (!after.has(keyOf(w))) this.record({ kind: 'warning_cleared', data: { code: w.code, instanceIds: w.instanceIds } });
    this.current = [...next];
  }
}
