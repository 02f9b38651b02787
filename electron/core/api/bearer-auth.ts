/**
 * The control API's authentication: `Authorization: Bearer <token>`, compared in
 * constant time. The token is never accepted from the URL (a query string ends up in
 * logs and browser history); the browser page sends the header with fetch.
 */
import type { IncomingMessage } from 'node:http';
import { tokensEqual } from '../auth-token';
import { ApiError, rejected } from './api-error';

/** Returns the refusal for a request without the right bearer token, or null when it has it. */
export function checkBearer(req: IncomingMessage, token: string): ApiError | null {
  const header = req.headers.authorization;
  if (header == null || header === '') {
    return withChallenge(rejected(401, 'missing_token', 'this endpoint needs "Authorization: Bearer <token>"; the token is in <dataDir>/token'));
  }
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  if (match?.[1] == null || !tokensEqual(match[1], token)) {
    return withChallenge(rejected(401, 'invalid_token', 'the bearer token is wrong; the token is in <dataDir>/token'));
  }
  return null;
}

function withChallenge(error: ApiError): ApiError {
  return new ApiError(error.status, error.code, error.message, { ...error.options, headers: { 'WWW-Authenticate': 'Bearer realm="exobar"' } });
}
