/**
 * Main's side of the typed IPC (as electron/fiddle does it): one handler per channel
 * of shared/ipc-channels.ts. Each handler first checks that the message comes from
 * exobar's own window (its webContents, its top frame, the app's origin), then
 * validates the arguments with the shared schemas; a refused message is answered with
 * a clear error, counted, and never reaches the node.
 */
import type { IpcMain, IpcMainInvokeEvent, WebContents } from 'electron';
import type { BridgeActionName, BridgeActionResult } from '../../shared/bridge-actions';
import { IpcChannel, type LogFollowStart } from '../../shared/ipc-channels';
import type { Snapshot } from '../../shared/snapshot';
import { IPC_PAYLOADS, parseIpcArgs, type InvokeChannelKey, type IpcArgs } from './ipc-payloads';
import type { IpcResult } from './ipc-result';

/**
 * What the renderer may ask of main; the app's actions implement it. Every bridge
 * action of shared/bridge-actions.ts (main pushes snapshots itself), plus the latest
 * snapshot on request; arguments arrive already validated (the schemas' output types,
 * defaults filled in).
 */
export type IpcBackend = { [K in BridgeActionName]: (...args: IpcArgs<K>) => Promise<BridgeActionResult<K>> } & {
  getSnapshot(): Snapshot;
  /** Starts following a log; its new lines are pushed on LOG_LINES_CHANNEL with the stream's id. */
  followLog(source: string, lines: number): Promise<LogFollowStart>;
  unfollowLog(streamId: number): Promise<void>;
};

export interface IpcSenderPolicy {
  /** The popover's webContents; null while it does not exist (then every message is refused). */
  trustedWebContents(): WebContents | null;
  /** The origin the app's page is served from, e.g. "app://exobar". */
  origin: string;
}

export interface IpcHandlerOptions {
  ipcMain: Pick<IpcMain, 'handle' | 'removeHandler'>;
  backend: IpcBackend;
  policy: IpcSenderPolicy;
  /** Called for every refused message (wrong sender or invalid payload): count it. */
  onRefused(channel: string, reason: string): void;
  /** Called when an accepted call fails (for the log). */
  onError?(channel: string, error: unknown): void;
}

/**
 * Why a message must be refused, or null when it comes from the top frame of exobar's
 * own window showing the app's page. A page that navigated elsewhere, a subframe, or
 * any other webContents is refused.
 */
export function senderProblem(event: Pick<IpcMainInvokeEvent, 'sender' | 'senderFrame'>, policy: IpcSenderPolicy): string | null {
  const trusted = policy.trustedWebContents();
  if (!trusted) return 'exobar has no window to accept messages from';
  if (event.sender.id !== trusted.id) return `webContents ${event.sender.id} is not exobar's window`;
  const frame = event.senderFrame;
  if (!frame) return 'the sending frame is gone (navigated or closed)';
  if (frame.parent !== null) return 'messages from subframes are not accepted';
  let origin: string;
  try {
    // Not URL.origin: Node's URL gives "null" for schemes it does not know (app:).
    const url = new URL(frame.url);
    origin = `${url.protocol}//${url.host}`;
  } catch {
    return `the sending frame has an invalid URL (${frame.url})`;
  }
  if (origin !== policy.origin) return `the sending page (${origin}) is not exobar's (${policy.origin})`;
  return null;
}

function errorOf(error: unknown): { code: string; message: string } {
  if (error instanceof Error) {
    const code = (error as Error & { code?: unknown }).code;
    return { code: typeof code === 'string' ? code : 'failed', message: error.message };
  }
  return { code: 'failed', message: String(error) };
}

/** Calls the backend's method of the same name with the validated arguments. */
function dispatch<K extends InvokeChannelKey>(backend: IpcBackend, key: K, args: IpcArgs<K>): unknown {
  const method = backend[key] as (...a: unknown[]) => unknown;
  return method.apply(backend, args);
}

/** Registers one handler per invoke channel; returns a function that removes them. */
export function registerIpcHandlers(options: IpcHandlerOptions): () => void {
  const { ipcMain, backend, policy, onRefused, onError } = options;
  const keys = Object.keys(IPC_PAYLOADS) as InvokeChannelKey[];
  for (const key of keys) {
    const channel = IpcChannel[key];
    ipcMain.handle(channel, async (event, ...args: unknown[]): Promise<IpcResult<unknown>> => {
      const problem = senderProblem(event, policy);
      if (problem) {
        onRefused(channel, problem);
        return { ok: false, error: { code: 'refused_sender', message: `Refused ${channel}: ${problem}` } };
      }
      const parsed = parseIpcArgs(key, args);
      if (!parsed.ok) {
        onRefused(channel, parsed.message);
        return { ok: false, error: { code: 'invalid_payload', message: parsed.message } };
      }
      try {
        const value = await dispatch(backend, key, parsed.args);
        return { ok: true, value: value ?? null };
      } catch (error) {
        onError?.(channel, error);
        return { ok: false, error: errorOf(error) };
      }
    });
  }
  return () => {
    for (const key of keys) ipcMain.removeHandler(IpcChannel[key]);
  };
}
