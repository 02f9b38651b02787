/**
 * The snapshot's time, counting on once a second until the next snapshot: an idle
 * countdown ("unloads in 40 s") runs on screen between the node's renewals (it renews
 * an idle countdown's snapshot only every 30 s). Frozen while disconnected, where the
 * last state is only the last known one.
 */
import { useExobar } from '../store/store-context';
import { useNow } from './use-now';

/** Epoch ms "now" as of the snapshot, plus the time since it was applied. */
export function useSnapshotNow(): number {
  const at = useExobar((s) => s.snapshot.at);
  const receivedAt = useExobar((s) => s.receivedAt);
  const live = useExobar((s) => s.connection === 'connected');
  const now = useNow();
  return live && receivedAt > 0 ? at + Math.max(0, now - receivedAt) : at;
}
