/**
 * The bridge inside the Electron app: the preload exposes an object implementing
 * ExobarBridge as `window.exobar`. This wrapper validates every snapshot with the
 * shared schema (as the HTTP bridge does: the page trusts no bridge more than the
 * other) and cleans up error messages, which Electron prefixes with "Error invoking
 * remote method ...".
 */
import type { ExobarBridge } from '../../../shared/bridge';
import { BRIDGE_ACTION_NAMES, type BridgeActionName, type BridgeActions } from '../../../shared/bridge-actions';
import { parseSnapshotValue } from '../../../shared/snapshot';
import { errorMessage } from '../lib/error-message';
import { BridgeError, errorCode } from './bridge-error';

/** True when the page runs in the Electron popover. */
export function hasIpcBridge(target: { exobar?: ExobarBridge } = window): boolean {
  return typeof target.exobar === 'object' && target.exobar !== null;
}

async function clean<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    // The code stays: the page acts on some refusals (a stop with requests in flight asks first).
    // As the HTTP bridge reads a route's error answer: main sends the same route's code and count.
    const requests = typeof error === 'object' && error !== null && 'requests' in error && typeof error.requests === 'number' ? error.requests : null;
    throw new BridgeError(errorMessage(error), errorCode(error), requests);
  }
}

/** Every action of the table (shared/bridge-actions.ts), passed through with its error message cleaned. */
function cleanedActions(api: BridgeActions): BridgeActions {
  const wrap =
    <K extends BridgeActionName>(name: K) =>
    (...args: unknown[]) =>
      clean(() => (api[name] as (...a: unknown[]) => Promise<never>)(...args));
  const actions: Partial<Record<BridgeActionName, ReturnType<typeof wrap>>> = {};
  for (const name of BRIDGE_ACTION_NAMES) actions[name] = wrap(name);
  return actions as BridgeActions;
}

/** Wraps the preload's object; throws when the page is not in Electron. */
export function createIpcBridge(api: ExobarBridge | undefined = window.exobar): ExobarBridge {
  if (!api) throw new Error('window.exobar is missing: the page is not running inside the exobar app');
  const connectionListeners = new Set<(error: string | null) => void>();
  let invalid: string | null = null;
  const setInvalid = (error: string | null): void => {
    if (error === invalid) return;
    invalid = error;
    for (const listener of connectionListeners) listener(error);
  };
  return {
    subscribeSnapshots: (listener) =>
      api.subscribeSnapshots((value: unknown) => {
        // A snapshot the schema refuses is shown as a connection error, never rendered.
        let snapshot;
        try {
          snapshot = parseSnapshotValue(value);
        } catch (error) {
          setInvalid(errorMessage(error));
          return;
        }
        setInvalid(null);
        listener(snapshot);
      }),
    subscribeConnection: (listener) => {
      connectionListeners.add(listener);
      const unsubscribe = api.subscribeConnection((error) => listener(error ?? invalid));
      return () => {
        connectionListeners.delete(listener);
        unsubscribe();
      };
    },
    subscribeAlerts: (listener) => api.subscribeAlerts?.(listener) ?? (() => undefined),
    // Lines are checked to be strings: the page renders nothing a bridge did not promise.
    followLog: (source, lines, listener) =>
      api.followLog(source, lines, (event) => {
        if (event.kind === 'lines') listener({ kind: 'lines', lines: event.lines.filter((l): l is string => typeof l === 'string') });
        else listener(event);
      }),
    subscribeOpenLog: (listener) => api.subscribeOpenLog?.(listener) ?? (() => undefined),
    ...cleanedActions(api),
  };
}
