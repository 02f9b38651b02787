/**
 * On an exo instance exobar placed for a request (`exo.placeOnDemand`): that it did, and
 * when it deletes it ("placed by exobar for a request · unloads in 40 s"), the countdown
 * running once a second. An instance someone else placed shows nothing: exobar never
 * deletes it.
 */
import type { ExoInstanceDetail } from '../../../../shared/exo-snapshot';
import { formatDuration } from '../../../../shared/residency';
import { useSnapshotNow } from '../../lib/use-snapshot-now';

export function ExoPlacedRow({ placed }: { placed: NonNullable<ExoInstanceDetail['placedOnDemand']> }) {
  const now = useSnapshotNow();
  const words = placed.ttlSeconds === null ? 'kept placed' : placed.unloadsAt === null ? 'in use' : `unloads in ${formatDuration(placed.unloadsAt - now)}`;
  return (
    <div className="row small residency" data-testid="exo-placed-on-demand" title="exobar deletes this exo instance once idle past its time to live">
      <span className="muted">Placed by exobar for a request</span>
      <span data-testid="exo-placed-words">{words}</span>
    </div>
  );
}
