import type { ExoNodeSnapshot } from '../../../../shared/exo-snapshot';
import { plural } from '../../../../shared/status-words';
import { clockTime, exoConnectionWords } from '../../lib/exo-words';
import { formatBytes } from '../../lib/format';
import { ExoClusterTimeline } from './exo-cluster-timeline';
import { ExoNodeDownloads } from './exo-node-downloads';
import { useActions, useExobar } from '../../store/store-context';

/** A Mac's fast synch in words: read from exo's log here, or exo's default assumed elsewhere. */
function fastSynchWords(node: ExoNodeSnapshot): string {
  const { enabled, source } = node.fastSynch;
  const value = enabled === null ? 'unknown' : enabled ? 'on' : 'off';
  if (source === 'assumed') return `fast synch ${value} (assumed: exo does not publish it)`;
  return `fast synch ${value} (${source === 'exo_log' ? "from exo's log" : 'set by exobar'})`;
}

function NodeRow({ node }: { node: ExoNodeSnapshot }) {
  return (
    <li className="exo-node small" data-testid="exo-node" data-node={node.name ?? node.nodeId}>
      <div className="row">
        <strong className="nowrap" title={`exo node id ${node.nodeId}`}>
          {node.label}
        </strong>
        {node.isAttachedNode && <span className="badge info">attached</span>}
        <span className="spacer" />
        <span className={`badge ${node.fastSynch.source === 'assumed' ? 'warn' : ''}`} title={fastSynchWords(node)}>
          {node.fastSynch.source === 'assumed' ? 'fast synch on (assumed)' : `fast synch ${node.fastSynch.enabled ? 'on' : 'off'}`}
        </span>
      </div>
      <div className="row muted">
        <span className="ellipsis">{[node.model, node.chip].filter(Boolean).join(', ') || 'Mac'}</span>
        <span className="spacer" />
        <span className="tabular" title="memory available / total">
          {formatBytes(node.memoryAvailableBytes)} free of {formatBytes(node.memoryTotalBytes)}
        </span>
        {node.gpuUsage !== null && <span className="tabular">GPU {Math.round(node.gpuUsage * 100)}%</span>}
      </div>
      <ExoNodeDownloads downloads={node.downloads} nodeName={node.name ?? `node ${node.nodeId.slice(0, 8)}`} />
    </li>
  );
}

/**
 * The attached exo as a source: its address, how many Macs, connected or since when
 * not, the restart note (exo's ids change on restart, so instances are matched by
 * model), read problems, and the Macs themselves.
 */
export function ExoSourceHeader() {
  const exo = useExobar((s) => s.snapshot.exo);
  const { detachExo } = useActions();
  const detaching = useExobar((s) => s.busy['exo-detach'] === true);
  if (!exo) return null;
  const macs = exo.nodes.length;
  return (
    <section
      className={`card exo-source${exo.connected ? '' : ' unreachable'}`}
      aria-label="exo cluster"
      data-testid="exo-source"
      data-connected={exo.connected}
    >
      <div className="row">
        <span className={`dot tone-${exo.connected ? 'ok' : 'bad'}`} aria-hidden="true" />
        <strong className="ellipsis">exo at {exo.url}</strong>
        <span className="muted small">{macs === 1 ? '1 Mac' : `${macs} Macs`}</span>
        <span className="spacer" />
        <span className={exo.connected ? 'small' : 'small failure'} data-testid="exo-connection">
          {exoConnectionWords(exo)}
        </span>
        <button type="button" className="button small" disabled={detaching} onClick={() => void detachExo()}>
          Detach
        </button>
      </div>
      {!exo.connected && exo.lastError && (
        <p className="failure small" role="alert">
          {exo.lastError.message}. Its models are shown as last seen; exobar retries by itself.
        </p>
      )}
      {exo.restartedAt !== null && (
        <p className="muted small" data-testid="exo-restarted">
          exo restarted: instances matched by model ({clockTime(exo.restartedAt)})
        </p>
      )}
      {(exo.parseErrors > 0 || exo.unknownTags > 0) && (
        <p className="muted small" data-testid="exo-read-problems">
          {exo.parseErrors > 0 && `${plural(exo.parseErrors, 'entry', 'entries')} of exo's state could not be read (skipped). `}
          {exo.unknownTags > 0 && `${plural(exo.unknownTags, 'entry', 'entries')} ${exo.unknownTags === 1 ? 'carries' : 'carry'} a tag this exobar does not know (shown as unknown).`}
        </p>
      )}
      {macs > 0 && (
        <ul className="exo-nodes" aria-label="Macs">
          {exo.nodes.map((node) => (
            <NodeRow key={node.nodeId} node={node} />
          ))}
        </ul>
      )}
      <ExoClusterTimeline />
    </section>
  );
}
