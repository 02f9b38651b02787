/**
 * A refusal the page acts on rather than only shows: the API's error code (and, for
 * a stop with requests in flight, how many requests would end) carried on the Error
 * both bridges reject with. The HTTP bridge reads them from the JSON error answer; the
 * IPC bridge's errors carry `code` from main's envelope.
 */

/** An Error with the API's `code` and, for `requests_in_flight`, its `requests`. */
export class BridgeError extends Error {
  constructor(
    message: string,
    readonly code: string | null,
    readonly requests: number | null = null,
  ) {
    super(message);
    this.name = 'BridgeError';
  }
}

/** The API's error code of a failed action, whichever bridge it came through; null when it has none. */
export function errorCode(error: unknown): string | null {
  if (typeof error !== 'object' || error === null || !('code' in error)) return null;
  return typeof error.code === 'string' ? error.code : null;
}

/**
 * For a stop refused because requests are in flight: how many would end (the server's
 * count when it sent one, else `fallback`); null for any other failure.
 */
export function requestsInFlightOf(error: unknown, fallback: number): number | null {
  if (errorCode(error) !== 'requests_in_flight') return null;
  const told = error instanceof BridgeError ? error.requests : null;
  return told !== null && told > 0 ? told : Math.max(1, fallback);
}
