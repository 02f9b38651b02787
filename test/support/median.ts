/** The median of a bench's or a test's figures: shared/stats.ts's, for lists that are never empty (an empty one is a bug in the measuring code). */
import { median as medianOrNull } from '../../shared/stats';

export function median(values: readonly number[]): number {
  const value = medianOrNull(values);
  if (value === null) throw new Error('median of no values');
  return value;
}
