/**
 * What the page says about its connection to exobar, derived once for the three places
 * that say it: the header's headline, the footer's API line and the access message's
 * title. Each connection state has one set of words, so the footer can never say "Local
 * API not running" while the message says exobar runs and refused the token.
 */
import type { ConnectionProblem } from '../../../shared/bridge';
import type { ConnectionState } from '../store/exobar-store';

/** The page's connection, in the states the operator tells apart. */
export type PageConnection = 'connecting' | 'connected' | 'reconnecting' | 'token_refused' | 'no_token' | 'server_gone';

export interface ConnectionWords {
  /** The header's headline; null: the header shows the models' overall state. */
  header: string | null;
  /** The footer's API line; null: the API's address from the snapshot. */
  footer: string | null;
  /** The access message's title; null: no message. */
  message: string | null;
}

/**
 * The state from the store: the stream broke after it worked (reconnecting, retrying,
 * the last snapshot shown), the server runs and refused the token or got none, or
 * nothing answered from the start (server gone).
 */
export function pageConnection(connection: ConnectionState, problem: ConnectionProblem | null, received: boolean): PageConnection {
  if (connection === 'connected') return 'connected';
  if (connection === 'connecting') return received ? 'connected' : 'connecting';
  if (problem === 'token_refused') return 'token_refused';
  if (problem === 'no_token') return 'no_token';
  return received ? 'reconnecting' : 'server_gone';
}

export const CONNECTION_WORDS: Record<PageConnection, ConnectionWords> = {
  connecting: { header: 'Connecting…', footer: 'Connecting to the local API…', message: null },
  connected: { header: null, footer: null, message: null },
  reconnecting: {
    header: 'Reconnecting…',
    footer: 'Local API not answering: reconnecting…',
    message: 'Connection lost — reconnecting, showing the last known state',
  },
  token_refused: { header: 'Token refused', footer: 'Local API running: it refused this page’s token', message: 'Token refused' },
  no_token: { header: 'No access token', footer: 'Local API running: this page has no access token', message: 'No access token' },
  server_gone: { header: 'Cannot reach exobar', footer: 'Local API not reachable: nothing answers', message: 'Cannot reach exobar' },
};
