/**
 * What every IPC handler answers: a value, or an error in words. An envelope rather
 * than a thrown error, because Electron rewrites thrown errors' messages ("Error
 * invoking remote method ...") and drops their codes; the preload unwraps it.
 */
export type IpcResult<T> = { ok: true; value: T } | { ok: false; error: IpcError };

export interface IpcError {
  /** refused_sender, invalid_payload, or the route's error code (queue_full, instance_not_found, ...); null when the route gave none. */
  code: string | null;
  message: string;
  /** For `requests_in_flight`: how many requests the stop would end (the route's count). */
  requests?: number;
}

/** The value of a result, or an Error carrying the message (and code) main sent. */
export function unwrapIpcResult<T>(result: IpcResult<T>): T {
  if (result && typeof result === 'object' && result.ok === true) return result.value;
  if (result && typeof result === 'object' && result.ok === false) {
    const error = new Error(result.error.message) as Error & { code?: string | null; requests?: number };
    error.code = result.error.code;
    if (result.error.requests !== undefined) error.requests = result.error.requests;
    throw error;
  }
  throw new Error('exobar: unexpected answer from the main process');
}
