/**
 * Attach mode as a core feature (docs/exo.md): the attachment to the exo at the saved
 * address (or the caller's), the exo exobar started attached to once its API answers,
 * the proxy routes (first among the core's: a request for an exo model goes to exo),
 * Stop on an exo instance, and the lost models' endpoints.
 */
import { controlRoutes } from '../../api/control-routes';
import type { ApiRoute } from '../../api/route-types';
import type { CoreContext, StartedFeature } from '../../core-feature';
import { createHoldOverride, type HoldOverride } from '../../checks/hold-override';
import type { ExoProcessManager } from '../../exo-process';
import { placementEvent } from '../../on-demand/model-events';
import { ttlFromSetting } from '../../on-demand/on-demand-settings';
import { SettingsStore, type SettingsPatch } from '../../settings/settings-store';
import type { ModelLoader } from '../../on-demand/model-loader';
import { ollamaDialectRoutes, v1DialectRoutes } from '../../api/dialects/dialect-routes';
import { openAiRoutes } from '../../api/openai-routes';
import type { ExobarNode } from '../../node/node-types';
import { attachStartedExo } from './attach-started-exo';
import { lostModelRoutes } from '../cluster-events/lost-model-routes';
import { ExoAttachment, type ExoAttachmentOptions } from './exo-attachment';
import { exoRoutes } from './exo-routes';

export interface ExoFeatureOptions {
  node: ExobarNode;
  exoProcess: ExoProcessManager;
  /** Loads a model on request: a request for a model exo does not serve is exobar's, through its own routes. */
  loader: ModelLoader;
  /** Saves a settings change (attaching saves `exo.url`); default: `<dataDir>/settings.json`. */
  updateSettings?: (patch: SettingsPatch) => Promise<unknown>;
  /** The address to attach to for this run instead of the setting; null attaches to nothing. */
  exoUrl?: string | null;
  /** Attach mode's paths and polling (tests). */
  attachment?: Partial<Omit<ExoAttachmentOptions, 'hub' | 'saveUrl'>>;
}

export function startExo(ctx: CoreContext, options: ExoFeatureOptions): StartedFeature & { exo: ExoAttachment; proxyRoutes: ApiRoute[]; hold: HoldOverride } {
  const getSettings = () => ctx.getSettings();
  const { loader } = options;
  const updateSettings = options.updateSettings ?? (async (patch: SettingsPatch) => (await SettingsStore.open(ctx.dataDir, ctx.logger)).update(patch));
  // The operator's exo.hold, which the sharing check overrides for its runs on exo only.
  const hold = createHoldOverride(() => getSettings().exo.hold);
  const exo = new ExoAttachment({
    holdEnabled: hold.current,
    placeOnDemand: () => getSettings().exo.placeOnDemand,
    loadStallFloorMs: () => getSettings().exo.loadStallSeconds * 1000,
    // What exobar places on exo for a request unloads after the same idle time as a local model.
    idleTtlSeconds: () => ttlFromSetting(getSettings().onDemand.idleTtlSeconds),
    onPlacement: (event) => ctx.eventLog.record(placementEvent(event)),
    // exo's log is where exo keeps it with the environment exobar would start it with (an EXO_HOME in exo.env moves it).
    exoEnv: () => ({ ...process.env, ...getSettings().exo.env }),
    // A request for a model exo does not serve is exobar's: it loads on request there too.
    localRoutes: [...openAiRoutes({ loader }), ...v1DialectRoutes({ loader }), ...ollamaDialectRoutes({ loader })],
    ...options.attachment,
    hub: ctx.hub,
    saveUrl: (url) => updateSettings({ exo: { url } }).then(() => undefined),
  });
  // A bad saved address or a failed look-up must never keep the core from starting.
  void exo
    .start(options.exoUrl === undefined ? getSettings().exo.url : options.exoUrl)
    .catch((error: unknown) => ctx.logger.warn({ err: error }, 'attaching to exo failed'));
  // The exo exobar runs is attached to once its API answers: --exo-start alone shows the cluster.
  const stopAttachStarted = attachStartedExo(options.exoProcess, exo, (error) => ctx.logger.warn({ err: error }, 'attaching to the exo exobar started failed'));
  return {
    exo,
    hold,
    proxyRoutes: exo.routes,
    routes: [
      // "Stop" on an exo instance deletes it on exo; a local one falls through to the node.
      ...exoRoutes(exo, controlRoutes({ fitChecker: ctx.fitChecker })),
      // Place again or dismiss a model exo took away (exo_model_lost).
      ...lostModelRoutes(exo),
    ],
    async stop() {
      stopAttachStarted();
      await exo.stop();
    },
  };
}
