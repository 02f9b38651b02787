/**
 * The store's page-level actions: the diagnostic bundle, copying the API address, the
 * notice and the alerts, opening the log view, and the reads the panels make themselves
 * (request log, history, sharing checks, logs), handed straight to the bridge.
 */
import type { ActionSlice } from './action-context';

type PageAction =
  | 'exportDiagnostics'
  | 'copyApiBaseUrl'
  | 'dismissNotice'
  | 'dismissAlert'
  | 'openLog'
  | 'listRequests'
  | 'getHistory'
  | 'startSharingCheck'
  | 'getCheck'
  | 'cancelCheck'
  | 'listChecks'
  | 'listLogSources'
  | 'followLog';

export const pageActions = (copy: (text: string) => Promise<void>): ActionSlice<PageAction> => ({ bridge, set, get, run, dismissedAlerts }) => ({
  exportDiagnostics: () =>
    run('diagnostics', async () => {
      const result = await bridge.exportDiagnostics();
      if (!result.saved) return;
      return `Diagnostic bundle saved${result.location ? `: ${result.location}` : ''}`;
    }),
  copyApiBaseUrl: () =>
    run('copy-url', async () => {
      const url = get().snapshot.apiBaseUrl;
      if (!url) throw new Error('The local API is not running, so there is no address to copy');
      await copy(url);
      return `Copied ${url}`;
    }),
  dismissNotice: () => set({ notice: null }),
  dismissAlert: (id) => {
    dismissedAlerts.add(id);
    set((s) => ({ alerts: s.alerts.filter((a) => a.id !== id) }));
  },
  openLog: (source) => set((s) => ({ logView: { source, request: s.logView.request + 1 } })),
  listRequests: (filter) => bridge.listRequests(filter),
  getHistory: (range) => bridge.getHistory(range),
  startSharingCheck: (request) => bridge.startSharingCheck(request),
  getCheck: (id) => bridge.getCheck(id),
  cancelCheck: (id) => bridge.cancelCheck(id),
  listChecks: () => bridge.listChecks(),
  listLogSources: () => bridge.listLogSources(),
  followLog: (source, lines, listener) => bridge.followLog(source, lines, listener),
});
