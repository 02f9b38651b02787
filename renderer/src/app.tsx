/**
 * The popover's page. Which parts show depends on the connection and the snapshot:
 * connecting → a spinner; unreachable before any snapshot → the error and what to do;
 * nothing running → the empty state and the safe launch; otherwise one card per model.
 * The model catalog and the MLX engine's setup sit below, collapsed, with the requests,
 * the history and the logs. An attached exo
 * cluster shows as a source header and one card per exo instance beside the local ones.
 */
import { AppAlerts } from './components/alerts/app-alerts';
import { AppFooter } from './components/frame/app-footer';
import { AppHeader } from './components/frame/app-header';
import { ConnectionError, EmptyState, LoadingState } from './components/frame/connection-state';
import { ExoAttachPanel, ExoOfferBanner } from './components/exo/exo-attach';
import { ExoInstanceCard } from './components/instances/exo-instance-card';
import { ExoSourceHeader } from './components/exo/exo-source-header';
import { ExoProcessStatus } from './components/exo/exo-process-status';
import { InstanceCard } from './components/instances/instance-card';
import { HistoryPanel } from './components/history/history-panel';
import { LogsPanel } from './components/logs/logs-panel';
import { ModelsPanel } from './components/models/models-panel';
import { RequestsPanel } from './components/requests/requests-panel';
import { NoticeBar } from './components/alerts/notice-bar';
import { SafeLaunchPanel } from './components/launch/safe-launch-panel';
import { SharingCheckPanel } from './components/sharing/sharing-check-panel';
import { StopConfirmDialog } from './components/stop/stop-confirm-dialog';
import { WarningBanners } from './components/alerts/warning-banner';
import { useExobar } from './store/store-context';

function InstanceCards() {
  const instances = useExobar((s) => s.snapshot.instances);
  // One column in the popover; side by side in a wide window (app.css).
  return (
    <div className="instance-grid" data-testid="instance-grid">
      {instances.map((instance) =>
        instance.source === 'exo' ? <ExoInstanceCard key={instance.id} instance={instance} /> : <InstanceCard key={instance.id} instance={instance} />,
      )}
    </div>
  );
}

function Body() {
  const received = useExobar((s) => s.received);
  const connection = useExobar((s) => s.connection);
  const empty = useExobar((s) => s.snapshot.instances.length === 0);
  if (!received) return connection === 'error' ? null : <LoadingState />;
  // The same panels either way; only the second says nothing is running or shows the cards.
  return (
    <>
      <ExoSourceHeader />
      {empty ? <EmptyState /> : <InstanceCards />}
      <SafeLaunchPanel />
      <ExoAttachPanel />
      <ModelsPanel />
      <RequestsPanel />
      <HistoryPanel />
      <SharingCheckPanel />
    </>
  );
}

/** The log view, outside Body: it stays open (and following) when the first model starts or the last one stops. */
function Logs() {
  const received = useExobar((s) => s.received);
  return received ? <LogsPanel /> : null;
}

export function App() {
  const seq = useExobar((s) => s.snapshot.seq);
  const applied = useExobar((s) => s.applied);
  return (
    <div className="app" data-seq={seq} data-applied={applied}>
      <AppHeader />
      <main className="content">
        <ConnectionError />
        <AppAlerts />
        <NoticeBar />
        <ExoOfferBanner />
        <WarningBanners />
        <ExoProcessStatus />
        <Body />
        <Logs />
      </main>
      <AppFooter />
      <StopConfirmDialog />
    </div>
  );
}
