/**
 * How the core starts its features: each feature folder exports a `start…(ctx)` that
 * sets the feature up and answers what the core needs of it (its routes, the snapshot
 * sections it registered, its stop); `startCore` runs them in order and stops them in
 * reverse, so a feature is stopped before those it was built on.
 */
import type { Logger } from 'pino';
import type { Settings } from '../../shared/api';
import type { ApiRoute } from './api/route-types';
import type { Registration, SnapshotHub } from './app-state/snapshot-hub';
import type { FitChecker } from './fit/fit-gate';
import type { EventLog } from './node/event-log';

/** What every feature is started with. */
export interface CoreContext {
  dataDir: string;
  logger: Logger;
  /** The settings the core started with, and the settings now (the app's can change while it runs). */
  settings: Settings;
  getSettings(): Settings;
  hub: SnapshotHub;
  eventLog: EventLog;
  /** Every launch's fit check (the settings' headroom kept free). */
  fitChecker: FitChecker;
}

/** A started feature: its endpoints, the sections it registered (removed at its stop), its stop. */
export interface StartedFeature {
  routes?: ApiRoute[];
  sections?: Registration[];
  stop?(): void | Promise<void>;
}

/** The features started so far, stopped in reverse order of their start. */
export class FeatureList {
  private readonly started: StartedFeature[] = [];

  /** Records a started feature; returns it, so its own fields stay at hand. */
  add<F extends StartedFeature>(feature: F): F {
    this.started.push(feature);
    return feature;
  }

  /** Every started feature's routes, in the order the features started. */
  routes(): ApiRoute[] {
    return this.started.flatMap((feature) => feature.routes ?? []);
  }

  /** Stops every feature, the last started first; each one's stop is awaited before the next; the first failure is rethrown at the end. */
  async stop(): Promise<void> {
    let failure: unknown = null;
    for (const feature of this.started.splice(0).reverse()) {
      // One feature that fails to stop must not leave the ones it was built on running.
      await Promise.resolve()
        .then(() => feature.stop?.())
        .catch((error: unknown) => (failure ??= error));
      for (const section of feature.sections ?? []) section.remove();
    }
    if (failure) throw failure;
  }
}
