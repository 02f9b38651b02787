import { isLocal } from '../../../../shared/instance-state';
import { CONNECTION_WORDS, pageConnection } from '../../lib/connection-view';
import { useActions, useExobar } from '../../store/store-context';

/** The bottom toolbar: copy the local API's address, export diagnostics, stop everything. */
export function AppFooter() {
  const { copyApiBaseUrl, exportDiagnostics, stopAll } = useActions();
  const apiBaseUrl = useExobar((s) => s.snapshot.apiBaseUrl);
  // The server's version is known from its first snapshot only (never the empty snapshot's 0.0.0).
  const version = useExobar((s) => (s.received ? s.snapshot.version : null));
  // "Stop all" stops this node's runners; exo's instances are exo's to stop.
  const hasInstances = useExobar((s) => s.snapshot.instances.some(isLocal));
  const exporting = useExobar((s) => s.busy.diagnostics === true);
  const stopping = useExobar((s) => s.busy['stop-all'] === true);
  const connected = useExobar((s) => s.connection === 'connected');
  // The API line says what the header and the access message say about the connection.
  const state = useExobar((s) => pageConnection(s.connection, s.connectionProblem, s.received));
  const apiLine = CONNECTION_WORDS[state].footer ?? apiBaseUrl ?? 'Local API not running';
  return (
    <footer className="app-footer">
      <div className="row toolbar">
        <button
          type="button"
          className="button small"
          disabled={!apiBaseUrl}
          onClick={() => void copyApiBaseUrl()}
          title={apiBaseUrl ?? 'The local API is not running'}
        >
          Copy API URL
        </button>
        <button type="button" className="button small" disabled={exporting || !connected} onClick={() => void exportDiagnostics()}>
          {exporting ? 'Exporting…' : 'Export diagnostics'}
        </button>
        <span className="spacer" />
        <button type="button" className="button small danger" disabled={!hasInstances || stopping} onClick={() => void stopAll()}>
          {stopping ? 'Stopping…' : 'Stop all'}
        </button>
      </div>
      <div className="row small muted">
        <span className="api-url" data-testid="api-url" data-connection={state}>
          {apiLine}
        </span>
        <span className="spacer" />
        {version !== null && <span data-testid="version">v{version}</span>}
      </div>
    </footer>
  );
}
