/**
 * The tray's "Launch safe pair": the plan first; when a gate the operator may pass
 * blocks it (the fit check, exo's fast-synch gate), a dialog says what and what it
 * risks, with "Launch anyway" beside Cancel, and the launch then carries the same
 * acknowledgement as the popover's and the API's (`acknowledgeMemory`,
 * `acknowledgeRisk`). Without Electron: the dialog is passed in.
 */
import type { MessageBoxOptions } from 'electron';
import type { SafePairPlan } from '../../shared/api';
import type { LaunchSafePairOptions } from '../../shared/bridge-actions';
import { acknowledging, launchAnywayOffers, type LaunchAnywayOffer } from '../../shared/launch-anyway';

export const LAUNCH_ANYWAY_BUTTONS = ['Launch anyway', 'Cancel'] as const;

/** The dialog for these offers: Cancel is the default, as for every risk the operator takes on purpose. */
export function launchAnywayQuestion(offers: readonly LaunchAnywayOffer[]): MessageBoxOptions {
  return {
    type: 'warning',
    message: `${offers.map((o) => `${o.title}.`).join(' ')} Launch it anyway?`,
    detail: offers.map((o) => o.detail).join('\n\n'),
    buttons: [...LAUNCH_ANYWAY_BUTTONS],
    defaultId: 1,
    cancelId: 1,
  };
}

export interface MenuLaunchDeps {
  plan(): Promise<SafePairPlan>;
  launch(options?: LaunchSafePairOptions): Promise<void>;
  /** Shows the dialog; resolves with the index of the button pressed. */
  ask(question: MessageBoxOptions): Promise<number>;
}

/**
 * Plans, asks when a gate must be passed, launches. Resolves with what was done; a plan
 * blocked by something else launches plainly so its refusal (in words) reaches the caller.
 */
export async function launchSafePairFromMenu(deps: MenuLaunchDeps): Promise<'launched' | 'launched_anyway' | 'cancelled'> {
  const offers = launchAnywayOffers(await deps.plan());
  if (!offers || offers.length === 0) {
    await deps.launch();
    return 'launched';
  }
  if ((await deps.ask(launchAnywayQuestion(offers))) !== 0) return 'cancelled';
  await deps.launch(acknowledging(offers));
  return 'launched_anyway';
}
