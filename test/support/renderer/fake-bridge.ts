/**
 * A bridge the tests drive by hand: push snapshots and connection errors, and check
 * which actions the page called.
 */
import type { HistoryAnswer, HistoryRange } from '../../../shared/history';
import type { RequestList } from '../../../shared/request-record';
import { vi } from 'vitest';
import type { ExoProbeAnswer } from '../../../shared/api';
import type { AppAlert, ConnectionProblem, ExobarBridge } from '../../../shared/bridge';
import type { LogSourceInfo, LogSourceList, LogStreamEvent } from '../../../shared/logs';
import type { ModelFit } from '../../../shared/model-fit';
import type { Snapshot } from '../../../shared/snapshot';
import type { CheckList, CheckStatus, SharingCheckRequest } from '../../../shared/sharing-check';
import { catalog, safePairPlan } from './fixtures';

export class FakeBridge implements ExobarBridge {
  private snapshotListeners = new Set<(s: Snapshot) => void>();
  private connectionListeners = new Set<(e: string | null, problem?: ConnectionProblem) => void>();
  private alertListeners = new Set<(a: AppAlert[]) => void>();

  getSafePairPlan = vi.fn(async () => safePairPlan());
  launchSafePair = vi.fn(async () => {});
  createInstance = vi.fn(async () => ({ id: 'inst-new' }));
  updateInstance = vi.fn(async () => {});
  stopInstance = vi.fn(async () => {});
  retryInstance = vi.fn(async () => {});
  unloadInstance = vi.fn(async () => {});
  setResidency = vi.fn(async () => {});
  stopAll = vi.fn(async () => {});
  cancelRequest = vi.fn(async () => {});
  exportDiagnostics = vi.fn(async () => ({ saved: true, location: 'exobar-diagnostics.zip' }));
  setupMlxRuntime = vi.fn(async () => {});
  refreshMlxRuntime = vi.fn(async () => {});
  listModels = vi.fn(async () => catalog());
  /** What checkModelFits answers: set it from the real check (electron/core/fit/model-fits.ts). */
  modelFits: ModelFit[] = [];
  checkModelFits = vi.fn(async (): Promise<ModelFit[]> => this.modelFits);
  requests: RequestList = { requests: [], events: [], total: 0, diskBytes: 0, diskCapBytes: 16 * 1024 * 1024, problem: null };
  listRequests = vi.fn(async (): Promise<RequestList> => this.requests);
  history: HistoryAnswer['models'] = [];
  getHistory = vi.fn(async (range: HistoryRange): Promise<HistoryAnswer> => ({ range, models: this.history, diskBytes: 0, diskCapBytes: 0, problem: null }));
  probeExo = vi.fn(async (url: string): Promise<ExoProbeAnswer> => ({ ok: true, url, nodeId: 'a'.repeat(32), nodes: 2 }));
  attachExo = vi.fn(async (_url: string) => {});
  detachExo = vi.fn(async () => {});
  placeLostModelAgain = vi.fn(async (model: string, _options?: { acknowledgeRisk: boolean }) => ({
    model,
    instanceId: `exo-${model}`,
    nodes: ['studio-a'],
    alreadyPlaced: false,
  }));
  dismissLostModel = vi.fn(async (_model: string) => {});
  controlExoProcess = vi.fn(async () => {});
  logSources: LogSourceInfo[] = [];
  listLogSources = vi.fn(async (): Promise<LogSourceList> => ({ sources: this.logSources }));
  /** Each followed log: its source, how many lines first, and its listener (push events through `log`). */
  followed: { source: string; lines: number; listener: (event: LogStreamEvent) => void; active: boolean }[] = [];
  private openLogListeners = new Set<(source: string) => void>();

  followLog(source: string, lines: number, listener: (event: LogStreamEvent) => void) {
    const entry = { source, lines, listener, active: true };
    this.followed.push(entry);
    return () => {
      entry.active = false;
    };
  }

  /** Sends an event to every active follower of `source`. */
  log(source: string, event: LogStreamEvent): void {
    for (const f of this.followed) if (f.active && f.source === source) f.listener(event);
  }

  subscribeOpenLog(listener: (source: string) => void) {
    this.openLogListeners.add(listener);
    return () => this.openLogListeners.delete(listener);
  }

  /** The tray's "Open log". */
  openLog(source: string): void {
    for (const l of this.openLogListeners) l(source);
  }
  /** The checks the page sees: set `checks` and `checkStatus` to drive the sharing-check panel. */
  checks: CheckList = { checks: [], running: null };
  checkStatus: CheckStatus | null = null;
  listChecks = vi.fn(async (): Promise<CheckList> => this.checks);
  startSharingCheck = vi.fn(async (_request: SharingCheckRequest): Promise<CheckStatus> => {
    if (!this.checkStatus) throw new Error('no check status set');
    return this.checkStatus;
  });
  getCheck = vi.fn(async (_id: string): Promise<CheckStatus> => {
    if (!this.checkStatus) throw new Error('no check status set');
    return this.checkStatus;
  });
  cancelCheck = vi.fn(async (_id: string) => {});

  subscribeSnapshots(listener: (s: Snapshot) => void) {
    this.snapshotListeners.add(listener);
    return () => this.snapshotListeners.delete(listener);
  }

  subscribeConnection(listener: (e: string | null, problem?: ConnectionProblem) => void) {
    this.connectionListeners.add(listener);
    return () => this.connectionListeners.delete(listener);
  }

  subscribeAlerts(listener: (a: AppAlert[]) => void) {
    this.alertListeners.add(listener);
    return () => this.alertListeners.delete(listener);
  }

  /** The Mac app pushes its undelivered alerts (all of them). */
  alerts(alerts: AppAlert[]): void {
    for (const l of this.alertListeners) l(alerts);
  }

  push(snapshot: Snapshot): void {
    for (const l of this.snapshotListeners) l(snapshot);
  }

  connection(error: string | null, problem?: ConnectionProblem): void {
    for (const l of this.connectionListeners) l(error, problem);
  }

  get listenerCount(): number {
    return this.snapshotListeners.size + this.connectionListeners.size;
  }
}
