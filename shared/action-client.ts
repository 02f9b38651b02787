/**
 * The one typed client of exobar's control API, for every caller that talks to a
 * server over HTTP: the page's HTTP bridge (in the browser) and the `exobar` commands
 * (status, check, on Node 20). fetch-based, so it runs in both. Each action's request
 * comes from the action table (shared/bridge-actions.ts) and its value from the shared
 * decoder (shared/bridge-answers.ts), so an action's request and answer are written
 * once, whoever calls it; an error answer is read in one place (`readErrorAnswer`).
 *
 * The words for a failure stay the caller's (the page names the token file it was
 * told, the CLI names the server record and EXOBAR_TOKEN): the client hands the
 * failed answer or the network error to the caller's `refused` and `unreachable`.
 */
import { z } from 'zod';
import { BRIDGE_ACTIONS, type BridgeActionArgs, type BridgeActionName, type BridgeActionResult, type BridgeActions } from './bridge-actions';
import { bridgeAnswer, JSON_ACTION_NAMES, type JsonAction } from './bridge-answers';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** One action as an HTTP request: its method, path and JSON body (undefined: none), from the action table. */
export interface ActionRequest {
  method: HttpMethod;
  path: string;
  body: unknown;
}

export function actionRequest<K extends BridgeActionName>(name: K, ...args: BridgeActionArgs<K>): ActionRequest {
  const route = BRIDGE_ACTIONS[name];
  return { method: route.http.method, path: route.http.path(...args), body: route.http.body?.(...args) };
}

/**
 * What a client reads of the API's error shape (`{"error":{"message","code",…}}`,
 * `ApiErrorBodySchema` in shared/api.ts): its words, its code and, for
 * `requests_in_flight`, how many requests would end. Loose on the rest, so a server of
 * another version still has its words shown.
 */
const ErrorAnswerSchema = z.object({
  error: z.looseObject({ message: z.string().min(1), code: z.string().nullish(), requests: z.number().optional() }),
});

export interface ErrorAnswer {
  message: string;
  code: string | null;
  requests: number | null;
}

/** An error answer's words and code; null when the body is not the API's error shape. */
export function readErrorAnswer(body: unknown): ErrorAnswer | null {
  const parsed = ErrorAnswerSchema.safeParse(body);
  if (!parsed.success) return null;
  const { message, code, requests } = parsed.data.error;
  return { message, code: code ?? null, requests: requests ?? null };
}

/** A response's JSON body; undefined when it has none, null when it is not JSON. */
export async function jsonBodyOf(response: Response): Promise<unknown> {
  const text = await response.text().catch(() => '');
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/** A successful answer whose body the action's decoder could not read (a server of another version). */
export class UnreadableAnswerError extends Error {
  override name = 'UnreadableAnswerError';
}

export interface ActionClientOptions {
  /** The server's origin, `http://127.0.0.1:52416`. */
  baseUrl: string;
  /** The control token; null sends none. */
  token: string | null;
  fetch?: typeof fetch;
  /** Gives up on a request after this long (default: never). */
  timeoutMs?: number;
  /** The error for an answer that is not a success, in the caller's words. */
  refused(response: Response): Promise<Error>;
  /** The error when nothing answered (refused connection, no reply in time), in the caller's words. */
  unreachable(error: unknown): Error;
  /** When given, a request without a token is refused with this error before anything is sent. */
  missingToken?(): Error;
}

export interface ActionClient {
  /** The absolute URL of an API path. */
  url(path: string): string;
  /** The headers of an API request: the bearer token, and `extra`. */
  headers(extra?: Record<string, string>): Record<string, string>;
  /** One request with the token, whatever its status; throws `unreachable`'s error when nothing answered. */
  request(method: HttpMethod, path: string, body?: unknown, init?: { timeoutMs?: number }): Promise<Response>;
  /** One action's request; throws `refused`'s error for an answer that is not a success. */
  send<K extends BridgeActionName>(name: K, ...args: BridgeActionArgs<K>): Promise<Response>;
  /** One JSON action: its request, then its value from the shared decoder (an unreadable answer throws {@link UnreadableAnswerError}). */
  call<K extends JsonAction>(name: K, ...args: BridgeActionArgs<K>): Promise<BridgeActionResult<K>>;
  /** Every JSON action as a method, as the page calls them. */
  actions(): Pick<BridgeActions, JsonAction>;
}

export function createActionClient(options: ActionClientOptions): ActionClient {
  const doFetch: typeof fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const url = (path: string): string => new URL(path, options.baseUrl).toString();
  const headers = (extra: Record<string, string> = {}): Record<string, string> => ({
    ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}),
    ...extra,
  });

  const request: ActionClient['request'] = async (method, path, body, limits = {}) => {
    if (!options.token && options.missingToken) throw options.missingToken();
    const timeoutMs = limits.timeoutMs ?? options.timeoutMs;
    // `cache` is the browser's (Node's fetch keeps no cache and accepts it); Node's RequestInit type lacks it.
    const init = {
      method,
      headers: headers(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store' as const,
      ...(timeoutMs === undefined ? {} : { signal: AbortSignal.timeout(timeoutMs) }),
    };
    try {
      return await doFetch(url(path), init);
    } catch (error) {
      throw options.unreachable(error);
    }
  };

  const send: ActionClient['send'] = async (name, ...args) => {
    const { method, path, body } = actionRequest(name, ...args);
    const response = await request(method, path, body);
    if (!response.ok) throw await options.refused(response);
    return response;
  };

  const call = async <K extends JsonAction>(name: K, ...args: BridgeActionArgs<K>): Promise<BridgeActionResult<K>> => {
    const body = await jsonBodyOf(await send(name, ...args));
    try {
      return bridgeAnswer(name, body);
    } catch (error) {
      throw new UnreadableAnswerError(error instanceof Error ? error.message : String(error), { cause: error });
    }
  };

  const actions = (): Pick<BridgeActions, JsonAction> =>
    Object.fromEntries(JSON_ACTION_NAMES.map((name) => [name, (...args: unknown[]) => call(name, ...(args as BridgeActionArgs<typeof name>))])) as Pick<
      BridgeActions,
      JsonAction
    >;

  return { url, headers, request, send, call, actions };
}
