/**
 * Checks on demand as a core feature (`exobar check sharing`, `/api/checks`): GPU
 * sharing, through this node's supervisor, reports kept in <dataDir>/checks. Experiment 2
 * runs under each policy in turn, the operator's back after it; on exo its requests go
 * through this server's own /v1 (known once it listens), with the hold on and off.
 */
import type { CoreContext, StartedFeature } from '../core-feature';
import type { ExoAttachment } from '../exo/attach/exo-attachment';
import type { ExobarNode } from '../node/node-types';
import type { PolicyOverride } from '../pacing/policy-override';
import { CheckManager } from './check-manager';
import { checkRoutes } from './check-routes';
import { CHECK_POLICIES } from './decode-experiment';
import type { HoldOverride } from './hold-override';

export interface ChecksFeatureOptions {
  node: ExobarNode;
  exo: Pick<ExoAttachment, 'url'>;
  sharingPolicy: PolicyOverride;
  hold: HoldOverride;
  /** This server's own URL, null until it listens. */
  ownUrl(): string | null;
}

export function startChecks(ctx: CoreContext, options: ChecksFeatureOptions): StartedFeature & { checks: CheckManager } {
  const checks = new CheckManager({
    node: options.node,
    dataDir: ctx.dataDir,
    decode: { policies: CHECK_POLICIES, applyPolicy: options.sharingPolicy.apply },
    exo: { exoUrl: () => options.exo.url, baseUrl: options.ownUrl, applyHold: options.hold.apply },
  });
  return { checks, routes: checkRoutes(checks) };
}
