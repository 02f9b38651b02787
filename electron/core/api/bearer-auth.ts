/**
 * The control API's authentication: `Authorization: Bearer <token>` (or Anthropic's `x-api-key: <token>`), compared in
 * constant time. The token is never accepted from the URL (a query string ends up in
 * logs and browser history); the browser page sends the header with fetch.
 */
import type { IncomingMessage } from 'node:http';
import { tokensEqual } from '../auth-token';
import { ApiError, rejected } from './api-error';

/**
 * Where the token is, for the refusal's words: the token file's real path, null when
 * the token came from `EXOBAR_TOKEN`, undefined when the caller did not say.
 */
export type TokenFile = string | null | undefined;

/**
 * Returns the refusal for a request without the right bearer token, or null when it
 * has it. The refusal says where the token is (`error.tokenFile`: a path, never the
 * token), so the page can tell the operator what to open.
 */
export function checkBearer(req: IncomingMessage, token: string, tokenFile?: TokenFile): ApiError | null {
  // Anthropic's clients send the key as `x-api-key`: taken the same as a bearer token.
  const apiKey = req.headers['x-api-key'];
  const header = req.headers.authorization || (typeof apiKey === 'string' && apiKey !== '' ? `Bearer ${apiKey}` : undefined);
  if (header == null || header === '') {
    return refusal('missing_token', `this endpoint needs "Authorization: Bearer <token>" (or "x-api-key: <token>"); ${whereWords(tokenFile)}`, tokenFile);
  }
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  if (match?.[1] == null || !tokensEqual(match[1], token)) {
    return refusal('invalid_token', `the bearer token is wrong; ${whereWords(tokenFile)}`, tokenFile);
  }
  return null;
}

function whereWords(tokenFile: TokenFile): string {
  if (tokenFile === null) return "the token is the server's EXOBAR_TOKEN";
  return `the token is in ${tokenFile ?? '<dataDir>/token'}`;
}

function refusal(code: string, message: string, tokenFile: TokenFile): ApiError {
  const base = rejected(401, code, message);
  const details = tokenFile === undefined ? {} : { tokenFile };
  return new ApiError(401, code, message, { ...base.options, details, headers: { 'WWW-Authenticate': 'Bearer realm="exobar"' } });
}
