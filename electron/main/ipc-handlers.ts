/**
 * Main's side of the typed IPC (as electron/fiddle does it): one handler per channel
 * of shared/ipc-channels.ts. Each handler first checks that the message comes from
 * exobar's own window (its webContents, its top frame, the app's origin); a refused
 * message is answered with a clear error, counted, and never reaches the node.
 *
 * A page action then has one implementation, its route: the handler builds the
 * action's method, path and body from the action table (shared/bridge-actions.ts) and
 * dispatches them to the core's route table in process, the same routes `exobar serve`
 * answers; the route validates the input and answers in its one error shape, and the
 * value is read by the shared decoder the HTTP bridge uses. Only what needs Electron
 * (the snapshot push's catch-up, the bundle's save sheet, following a log) has a
 * backend here.
 */
import type { IpcMain, IpcMainInvokeEvent, WebContents } from 'electron';
import { z } from 'zod';
import { actionRequest, readErrorAnswer } from '../../shared/action-client';
import type { BridgeActionArgs } from '../../shared/bridge-actions';
import { bridgeAnswer, JSON_ACTION_NAMES, type JsonAction } from '../../shared/bridge-answers';
import type { DiagnosticsResult } from '../../shared/bridge';
import { IpcChannel, type LogFollowStart } from '../../shared/ipc-channels';
import { LOG_LINES_MAX, LogSourceIdSchema } from '../../shared/logs';
import type { Snapshot } from '../../shared/snapshot';
import type { DispatchAnswer, DispatchRequest } from '../core/api/in-process-exchange';
import type { IpcError, IpcResult } from './ipc-result';

/** What only main can answer (it needs Electron or main's own state); every other action is a route. */
export interface IpcBackend {
  getSnapshot(): Snapshot;
  /** The bundle through the save sheet (the HTTP bridge downloads it instead). */
  exportDiagnostics(): Promise<DiagnosticsResult>;
  /** Starts following a log; its new lines are pushed on LOG_LINES_CHANNEL with the stream's id. */
  followLog(source: string, lines: number): Promise<LogFollowStart>;
  unfollowLog(streamId: number): Promise<void>;
}

/** The Electron-only channels' arguments (the actions' inputs are validated by their routes). */
const BACKEND_ARGS = {
  getSnapshot: z.tuple([]),
  exportDiagnostics: z.tuple([]),
  followLog: z.tuple([LogSourceIdSchema, z.number().int().min(0).max(LOG_LINES_MAX)]),
  unfollowLog: z.tuple([z.number().int().min(0)]),
} as const satisfies { [K in keyof IpcBackend]: z.ZodType<Parameters<IpcBackend[K]>> };

/** The core's in-process route dispatch (`ApiServer.dispatch`). */
export type RouteDispatch = (request: DispatchRequest) => Promise<DispatchAnswer>;

export interface IpcSenderPolicy {
  /** The popover's webContents; null while it does not exist (then every message is refused). */
  trustedWebContents(): WebContents | null;
  /** The origin the app's page is served from, e.g. "app://exobar". */
  origin: string;
}

export interface IpcHandlerOptions {
  ipcMain: Pick<IpcMain, 'handle' | 'removeHandler'>;
  backend: IpcBackend;
  /** Answers the page's actions from the core's route table. */
  dispatch: RouteDispatch;
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

function errorOf(error: unknown): IpcError {
  if (error instanceof Error) {
    const code = (error as Error & { code?: unknown }).code;
    return { code: typeof code === 'string' ? code : 'failed', message: error.message };
  }
  return { code: 'failed', message: String(error) };
}

/** A refused argument list in words: which argument (and field) and what is wrong with it. */
function problemsOf(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const [index, ...field] = issue.path;
      const where = index === undefined ? '' : `argument ${Number(index) + 1}${field.length > 0 ? ` field ${field.join('.')}` : ''}: `;
      return `${where}${issue.message}`;
    })
    .join('; ');
}

/** A route's error answer as the page's error: its code, its words, and `requests` for `requests_in_flight` (as the HTTP bridge reads it). */
function routeError(answer: DispatchAnswer): IpcError {
  const read = readErrorAnswer(answer.body);
  if (!read) return { code: null, message: `The server answered ${answer.status}` };
  const { message, code, requests } = read;
  return { code, message, ...(requests !== null ? { requests } : {}) };
}

/** One action over the route table: its request from the table, its value from the shared decoder. */
async function dispatchAction<K extends JsonAction>(dispatch: RouteDispatch, name: K, args: unknown[]): Promise<IpcResult<unknown>> {
  let request: DispatchRequest;
  try {
    // The same request the HTTP bridge and the CLI send (shared/action-client.ts).
    request = { ...actionRequest(name, ...(args as BridgeActionArgs<K>)), auth: 'ipc' };
  } catch (error) {
    return { ok: false, error: { code: 'invalid_payload', message: `Invalid arguments for ${IpcChannel[name]}: ${errorOf(error).message}` } };
  }
  const answer = await dispatch(request);
  if (answer.status >= 400) return { ok: false, error: routeError(answer) };
  return { ok: true, value: bridgeAnswer(name, answer.body) ?? null };
}

/** Registers one handler per invoke channel; returns a function that removes them. */
export function registerIpcHandlers(options: IpcHandlerOptions): () => void {
  const { ipcMain, backend, policy, onRefused, onError } = options;
  const channels: string[] = [];
  const handle = (channel: string, answer: (args: unknown[]) => Promise<IpcResult<unknown>>): void => {
    channels.push(channel);
    ipcMain.handle(channel, async (event, ...args: unknown[]): Promise<IpcResult<unknown>> => {
      const problem = senderProblem(event, policy);
      if (problem) {
        onRefused(channel, problem);
        return { ok: false, error: { code: 'refused_sender', message: `Refused ${channel}: ${problem}` } };
      }
      try {
        const result = await answer(args);
        if (!result.ok && result.error.code === 'invalid_payload') onRefused(channel, result.error.message);
        return result;
      } catch (error) {
        onError?.(channel, error);
        return { ok: false, error: errorOf(error) };
      }
    });
  };
  for (const name of JSON_ACTION_NAMES) handle(IpcChannel[name], (args) => dispatchAction(options.dispatch, name, args));
  for (const key of Object.keys(BACKEND_ARGS) as (keyof IpcBackend)[]) {
    handle(IpcChannel[key], async (args) => {
      const parsed = BACKEND_ARGS[key].safeParse(args);
      if (!parsed.success) {
        return { ok: false, error: { code: 'invalid_payload', message: `Invalid arguments for ${IpcChannel[key]}: ${problemsOf(parsed.error)}` } };
      }
      const method = backend[key] as (...a: unknown[]) => unknown;
      return { ok: true, value: (await method.apply(backend, parsed.data)) ?? null };
    });
  }
  return () => {
    for (const channel of channels) ipcMain.removeHandler(channel);
  };
}
