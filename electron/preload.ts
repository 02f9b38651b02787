/**
 * The preload: exposes one narrow object, `window.exobar`, implementing the shared
 * ExobarBridge over IPC. Nothing else of Electron or Node reaches the page (context
 * isolation and the sandbox are on); the renderer picks this bridge when
 * `window.exobar` exists.
 *
 * Runs sandboxed, so it is bundled as CommonJS and may only require 'electron'.
 */
import { contextBridge, ipcRenderer, type IpcRenderer, type IpcRendererEvent } from 'electron';
import type { AppAlert, ExobarBridge } from '../shared/bridge';
import { BRIDGE_ACTION_NAMES, BRIDGE_ACTIONS, type BridgeActionName, type BridgeActions } from '../shared/bridge-actions';
import { ALERTS_CHANNEL, IpcChannel, LOG_LINES_CHANNEL, OPEN_LOG_CHANNEL, type LogFollowStart } from '../shared/ipc-channels';
import type { Snapshot } from '../shared/snapshot';
import { unwrapIpcResult, type IpcResult } from './main/ipc-result';

type RendererIpc = Pick<IpcRenderer, 'invoke' | 'on' | 'removeListener'>;

/**
 * Every action of the table, each an invoke of its channel with the arguments as given.
 * Main's handler for that channel dispatches it to the action's route and answers its
 * value (read by the decoder the HTTP bridge uses) or the route's error; the page
 * validates nothing here but the snapshot.
 */
function actionsOverIpc(call: <T>(channel: string, ...args: unknown[]) => Promise<T>): BridgeActions {
  const invoke =
    (name: BridgeActionName) =>
    (...args: unknown[]) =>
      call<never>(BRIDGE_ACTIONS[name].channel, ...args);
  const actions: Partial<Record<BridgeActionName, ReturnType<typeof invoke>>> = {};
  for (const name of BRIDGE_ACTION_NAMES) actions[name] = invoke(name);
  return actions as BridgeActions;
}

/**
 * Builds the bridge the preload exposes as `window.exobar`, over an ipcRenderer (a fake
 * one in tests). The page reaches it through renderer/src/bridge/ipc-bridge.ts
 * (`createIpcBridge`), which validates what it delivers.
 */
export function createPreloadBridge(ipc: RendererIpc): ExobarBridge {
  const call = async <T>(channel: string, ...args: unknown[]): Promise<T> => unwrapIpcResult((await ipc.invoke(channel, ...args)) as IpcResult<T>);
  // Main pushes the undelivered alerts when the page has loaded and on every change; the
  // latest is kept from the start, so a subscriber that comes later still gets it.
  let alerts: AppAlert[] = [];
  const alertListeners = new Set<(alerts: AppAlert[]) => void>();
  ipc.on(ALERTS_CHANNEL, (_event: IpcRendererEvent, pushed: AppAlert[]) => {
    alerts = Array.isArray(pushed) ? pushed : [];
    for (const listener of alertListeners) listener(alerts);
  });

  return {
    subscribeSnapshots(listener) {
      // Main pushes on every change, but pushes sent before this page subscribed are
      // gone: ask for the latest too, and deliver only snapshots newer than the last one.
      let lastSeq = -1;
      let active = true;
      const deliver = (snapshot: Snapshot) => {
        if (!active || snapshot.seq <= lastSeq) return;
        lastSeq = snapshot.seq;
        listener(snapshot);
      };
      const onPush = (_event: IpcRendererEvent, snapshot: Snapshot) => deliver(snapshot);
      ipc.on(IpcChannel.snapshot, onPush);
      call<Snapshot>(IpcChannel.getSnapshot).then(deliver, () => undefined);
      return () => {
        active = false;
        ipc.removeListener(IpcChannel.snapshot, onPush);
      };
    },
    subscribeConnection(listener) {
      // Main is in the same app: there is no connection to lose.
      listener(null);
      return () => undefined;
    },
    subscribeAlerts(listener) {
      alertListeners.add(listener);
      listener(alerts);
      return () => alertListeners.delete(listener);
    },
    followLog(source, lines, listener) {
      // Lines pushed before main answered with the stream's id wait for it, in order.
      let streamId: number | null = null;
      let active = true;
      const early: { streamId: number; lines: string[] }[] = [];
      const onLines = (_event: IpcRendererEvent, pushed: { streamId: number; lines: string[] }) => {
        if (!active || !pushed || !Array.isArray(pushed.lines)) return;
        if (streamId === null) early.push(pushed);
        else if (pushed.streamId === streamId) listener({ kind: 'lines', lines: pushed.lines });
      };
      ipc.on(LOG_LINES_CHANNEL, onLines);
      const stop = () => {
        active = false;
        ipc.removeListener(LOG_LINES_CHANNEL, onLines);
      };
      call<LogFollowStart>(IpcChannel.followLog, source, lines).then(
        (start) => {
          if (!active) {
            void call(IpcChannel.unfollowLog, start.streamId).catch(() => undefined);
            return;
          }
          streamId = start.streamId;
          listener({ kind: 'source', id: source, title: start.title });
          if (start.lines.length > 0) listener({ kind: 'lines', lines: start.lines });
          for (const pushed of early.splice(0)) if (pushed.streamId === streamId) listener({ kind: 'lines', lines: pushed.lines });
        },
        (error: unknown) => {
          stop();
          listener({ kind: 'ended', message: error instanceof Error ? error.message : String(error) });
        },
      );
      return () => {
        if (!active) return;
        stop();
        if (streamId !== null) void call(IpcChannel.unfollowLog, streamId).catch(() => undefined);
      };
    },
    subscribeOpenLog(listener) {
      const onOpen = (_event: IpcRendererEvent, source: unknown) => {
        if (typeof source === 'string') listener(source);
      };
      ipc.on(OPEN_LOG_CHANNEL, onOpen);
      return () => ipc.removeListener(OPEN_LOG_CHANNEL, onOpen);
    },
    ...actionsOverIpc(call),
  };
}

// contextBridge copies the object into the page's world: only these functions cross.
if (contextBridge) contextBridge.exposeInMainWorld('exobar', createPreloadBridge(ipcRenderer));
