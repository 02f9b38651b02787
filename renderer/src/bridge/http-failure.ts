/**
 * The HTTP bridge's words for a failure: an API error answer as an error the page can act
 * on (its code, and `requests` for `requests_in_flight`, read by the shared client's
 * `readErrorAnswer`), a refused token with where the token is, or the status in words.
 */
import { jsonBodyOf, readErrorAnswer } from '../../../shared/action-client';
import { BridgeError } from './bridge-error';
import { tokenFileOf, tokenRefusedMessage, unreachableMessage } from './connection-words';

export async function describeFailure(response: Response, origin: string): Promise<BridgeError> {
  if (response.status === 401 || response.status === 403) return new BridgeError(tokenRefusedMessage(origin, await tokenFileOf(response)), 'token_refused');
  const answer = readErrorAnswer(await jsonBodyOf(response));
  if (answer) return new BridgeError(answer.message, answer.code, answer.requests);
  return new BridgeError(`The server answered ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`, null);
}

/** Nothing answered at the server's address. */
export function unreachableError(origin: string, error: unknown): BridgeError {
  return new BridgeError(unreachableMessage(origin, error instanceof Error ? error.message : String(error)), 'unreachable');
}
