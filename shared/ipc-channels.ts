/**
 * Every IPC channel, named once (as electron/fiddle does): the snapshot's two, and one
 * per bridge action from the action table (shared/bridge-actions.ts). Main checks the
 * sender is its own window, then dispatches each action to its route in process
 * (electron/main/ipc-handlers.ts), which validates it.
 */
import { BRIDGE_ACTION_NAMES, BRIDGE_ACTIONS, type BridgeActionName } from './bridge-actions';

type ActionChannels = { readonly [K in BridgeActionName]: (typeof BRIDGE_ACTIONS)[K]['channel'] };

const actionChannels = Object.fromEntries(BRIDGE_ACTION_NAMES.map((name) => [name, BRIDGE_ACTIONS[name].channel])) as ActionChannels;

export const IpcChannel = {
  /** main -> renderer: a new snapshot. */
  snapshot: 'exobar:snapshot',
  /** renderer -> main: ask for the latest snapshot (pushes sent before load are not lost). */
  getSnapshot: 'exobar:get-snapshot',
  /** renderer -> main: follow a log (source, lines); answers `{ streamId, title, lines }`, then pushes LOG_LINES_CHANNEL. */
  followLog: 'exobar:follow-log',
  /** renderer -> main: stop following (streamId). */
  unfollowLog: 'exobar:unfollow-log',
  ...actionChannels,
} as const;

/**
 * main -> renderer, push only: the alerts macOS did not show as notifications
 * (AppAlert[], all of them), sent on every change and when the page has loaded.
 */
export const ALERTS_CHANNEL = 'exobar:alerts';

export type IpcChannelName = (typeof IpcChannel)[keyof typeof IpcChannel];

/** main -> renderer, push only: `{ streamId, lines }`, new lines of a followed log. */
export const LOG_LINES_CHANNEL = 'exobar:log-lines';

/** main -> renderer, push only: the tray asked to show this log source. */
export const OPEN_LOG_CHANNEL = 'exobar:open-log';

/** What main answers `followLog` with. */
export interface LogFollowStart {
  streamId: number;
  title: string;
  lines: string[];
}
