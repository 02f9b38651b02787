import { formatAge } from '../../lib/format';
import { useNow } from '../../lib/use-now';
import { useExobar } from '../../store/store-context';

/**
 * An age from the snapshot that keeps counting until the next snapshot. The node pushes
 * on change, and a wedged runner sends nothing: that is exactly when a held cancel's or
 * a queued request's age must keep growing on screen. Frozen while disconnected, where
 * the last state is only the last known one.
 */
export function LiveAge({ ageMs }: { ageMs: number }) {
  const receivedAt = useExobar((s) => s.receivedAt);
  const live = useExobar((s) => s.connection === 'connected');
  const now = useNow();
  const elapsed = live && receivedAt > 0 ? Math.max(0, now - receivedAt) : 0;
  return <span className="tabular age">{formatAge(ageMs + elapsed)}</span>;
}
