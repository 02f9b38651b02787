/**
 * What `startCore` (start-core.ts) is given and what it answers: the core's options and
 * the running core the Electron app and `exobar serve` hold.
 */
import type { Logger } from 'pino';
import type { Settings } from '../../shared/api';
import type { CatalogModel } from '../../shared/catalog';
import type { ApiServer } from './api/api-server';
import type { ApiRoute } from './api/route-types';
import type { CheckManager } from './checks/check-manager';
import type { ExoAttachment, ExoAttachmentOptions, ExoBundleSource } from './exo/attach/exo-attachment';
import type { ExoProcessManager } from './exo-process';
import type { ExoStartOptions } from './exo-process/exo-process-feature';
import type { FitChecker } from './fit/fit-gate';
import type { History } from './history/history';
import type { MlxRuntimeService } from './mlx/mlx-runtime-service';
import type { ExobarNode } from './node/node-types';
import type { RequestLog } from './request-log/request-log';
import type { ShowLaunch } from './safe-pair/launch-section';
import type { SettingsPatch } from './settings/settings-store';

export interface StartCoreOptions {
  /** The data directory (token, settings, runner logs); created with mode 0700 if missing. */
  dataDir: string;
  /** Interface to bind (default 127.0.0.1). */
  host?: string;
  /** Port (default: settings.apiPort, else 52416); 0 picks a free port. */
  port?: number;
  /** Multiplies every sim duration (1 = calibrated real time). */
  simTimeScale?: number;
  /**
   * Whether ended requests go into the request log (default true). Off only where its
   * cost is measured (the benchmark); the metrics and history count them either way.
   */
  logRequests?: boolean;
  /** How often the history's `slower_than_usual` verdicts are read again into the warnings (default each minute). */
  slowerCheckMs?: number;
  /** Settings to use; default: `<dataDir>/settings.json` (defaults when missing). */
  settings?: Settings;
  /** The settings now, for endpoints that read them per request (the app's settings can change while it runs). Default: `settings`. */
  getSettings?: () => Settings;
  /** The built renderer to serve at `/`; null serves only a "not built" page. Default: <repo>/out/renderer. */
  rendererDir?: string | null;
  /** Further endpoints, built once the node exists, beside the built-in ones (the safe launch is always there). */
  extraRoutes?: (core: {
    node: ExobarNode;
    settings: Settings;
    dataDir: string;
    logger: Logger;
    exoBundle: () => ExoBundleSource | null;
    exoProcess: ExoProcessManager;
    /** The launch section: where a safe launch's progress goes. */
    showLaunch: ShowLaunch;
  }) => ApiRoute[];
  /** Further browser origins the API accepts (a renderer dev server). */
  extraOrigins?: string[];
  logger?: Logger;
  /**
   * exobar's own log file, listed as the log source `exobar`: the one the given logger
   * also writes (createTerminalLogger's `ownLog`). Default `<dataDir>/exobar.log`, which
   * the core's own default logger writes.
   */
  ownLog?: string;
  /** Attach to this exo for this run instead of the `exo.url` setting (`exobar serve --exo URL`); null attaches to nothing. */
  exoUrl?: string | null;
  /** Attach mode's paths and polling (exo's log folder, where to look for an exo to offer); tests point them elsewhere. */
  exo?: Partial<Omit<ExoAttachmentOptions, 'hub' | 'saveUrl'>>;
  /** Saves a settings change (attaching saves `exo.url`); default: `<dataDir>/settings.json`. */
  updateSettings?: (patch: SettingsPatch) => Promise<unknown>;
  /** This Mac's exo (docs/exo-process.md); by default the settings' `exo` section says whether and how it starts. */
  exoProcess?: ExoStartOptions;
  /** Models on demand: how often idle instances are checked against their time to live (tests). */
  onDemand?: { reapIntervalMs?: number };
  /** Replaces the launch fit check's memory readings (tests that need a Mac short of memory). */
  fitChecker?: FitChecker;
  /** Models the node may launch beyond the sim catalog and the MLX models found, read at each look-up (the bench's tiny models, tests). */
  extraModels?: () => readonly CatalogModel[];
}

export interface RunningCore {
  node: ExobarNode;
  /** `http://host:port` of the API server (the OpenAI base URL is `${url}/v1`). */
  url: string;
  host: string;
  port: number;
  /** The control API's bearer token. */
  token: string;
  dataDir: string;
  settings: Settings;
  server: ApiServer;
  /** The MLX engine: runtime detection, local models, "Set up MLX runtime" (the app's IPC calls it directly). */
  mlx: MlxRuntimeService;
  /** Attach mode: the attached exo (if any), the offer, attach / detach / probe. */
  exo: ExoAttachment;
  /**
   * This Mac's exo as exobar runs it: idle until started (setting, flag or
   * `POST /api/exo/process/start`); its state is the snapshot's `exoProcess`, and
   * `thisMacFastSynch(exoProcess.state())` (shared/exo-process.ts) is this Mac's value
   * for the exo section.
   */
  exoProcess: ExoProcessManager;
  /** Checks on demand (`exobar check sharing`, `/api/checks`): runs one at a time, keeps the reports. */
  checks: CheckManager;
  /** The request log: every ended request; `recordModelEvent` puts a load or unload beside them. */
  requestLog: RequestLog;
  /** History per model and minute, 30 days. */
  history: History;
  /** The snapshot's launch section: where the app's safe launch reports its progress. */
  showLaunch: ShowLaunch;
  /** Closes the API server, shuts the node down (every runner stopped) and stops the exo exobar started (never one it attached to). Idempotent. */
  stop(): Promise<void>;
}

export type { ExoStartOptions };
