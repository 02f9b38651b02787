/**
 * The safe launch as a core feature: its progress as the snapshot's `launch` section,
 * and its endpoints: on the cluster while exo is attached, else on this Mac.
 */
import type { CoreContext, StartedFeature } from '../core-feature';
import type { ExoAttachment } from '../exo/attach/exo-attachment';
import { exoSafePairRoutes } from '../exo/launch/exo-safe-pair-routes';
import { launchSection, type ShowLaunch } from './launch-section';
import { safePairRoutes } from './safe-pair-routes';

export function startSafePair(ctx: CoreContext, exo: Pick<ExoAttachment, 'url' | 'fastSynchOf'>): StartedFeature & { showLaunch: ShowLaunch } {
  const getSettings = () => ctx.getSettings();
  const showLaunch = launchSection(ctx.hub);
  const local = safePairRoutes({ getSettings, fitChecker: ctx.fitChecker, launch: { onProgress: showLaunch } });
  return {
    showLaunch,
    routes: [
      // While exo is attached the safe launch is on the cluster; else the local one answers.
      ...exoSafePairRoutes({ exoUrl: () => exo.url, getSettings, fastSynchOf: exo.fastSynchOf, onProgress: showLaunch, localRoutes: local }),
      ...local,
    ],
  };
}
