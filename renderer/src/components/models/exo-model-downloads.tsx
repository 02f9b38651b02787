import type { ExoNodeSnapshot } from '../../../../shared/exo-snapshot';
import { useExobar } from '../../store/store-context';
import { formatBytes } from '../../lib/format';
import { ExoNodeDownloads } from '../exo/exo-node-downloads';

const NO_NODES: ExoNodeSnapshot[] = [];
const shortModel = (modelId: string) => modelId.split('/').pop() ?? modelId;

/** Each model exo has on disk, with the Macs it is on (completed downloads), largest size seen. */
function completedModels(nodes: ExoNodeSnapshot[]): Array<{ modelId: string; macs: string[]; bytes: number | null }> {
  const byModel = new Map<string, { modelId: string; macs: string[]; bytes: number | null }>();
  for (const node of nodes) {
    for (const d of node.downloads) {
      if (d.status !== 'completed') continue;
      const entry = byModel.get(d.modelId) ?? { modelId: d.modelId, macs: [], bytes: null };
      entry.macs.push(node.label);
      if (d.totalBytes !== null) entry.bytes = Math.max(entry.bytes ?? 0, d.totalBytes);
      byModel.set(d.modelId, entry);
    }
  }
  return [...byModel.values()].sort((a, b) => a.modelId.localeCompare(b.modelId));
}

/**
 * The Models panel's exo part: the downloads exo runs on the cluster's Macs (ongoing with
 * progress, failed with exo's message, per Mac), and the models exo has downloaded, which
 * are what the safe pair on exo picks from. exo's pending entry for every known model
 * card is never a download. Nothing while no exo is attached.
 */
export function ExoModelDownloads() {
  const nodes = useExobar((s) => s.snapshot.exo?.nodes ?? NO_NODES);
  const active = nodes.filter((n) => n.downloads.some((d) => d.status !== 'completed'));
  const completed = completedModels(nodes);
  if (active.length === 0 && completed.length === 0) return null;
  return (
    <section className="exo-model-downloads" aria-label="exo downloads">
      {active.map((node) => (
        <div key={node.nodeId} data-testid="exo-model-downloads-node" data-node={node.label}>
          <div className="muted small">Downloading on {node.label}</div>
          <ExoNodeDownloads downloads={node.downloads} nodeName={node.label} />
        </div>
      ))}
      {completed.length > 0 && (
        <>
          <div className="muted small">Downloaded on exo: the safe pair picks from these</div>
          <ul className="model-list" aria-label="Downloaded on exo">
            {completed.map((m) => (
              <li key={m.modelId} className="row" data-testid="exo-downloaded" data-model={m.modelId}>
                <span className="badge ok">on disk</span>
                <span className="ellipsis" title={m.modelId}>
                  {shortModel(m.modelId)}
                </span>
                <span className="muted small tabular">
                  {formatBytes(m.bytes)} · on {m.macs.join(', ')}
                </span>
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
