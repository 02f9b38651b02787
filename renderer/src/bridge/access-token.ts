/**
 * The control API's bearer token in the browser. `exobar serve` prints a link ending
 * in `#token=...`: a fragment is never sent to a server, so the token is in no request
 * line or access log. On load the page moves it to sessionStorage (gone when the tab
 * closes) and rewrites the address without it, so it is not in the history either.
 */

export const TOKEN_STORAGE_KEY = 'exobar.token';

export interface TokenEnvironment {
  location: Pick<Location, 'hash' | 'pathname' | 'search'>;
  history: Pick<History, 'replaceState' | 'state'>;
  storage: Pick<Storage, 'getItem' | 'setItem'>;
}

/** Reads the token from the fragment (and then scrubs it) or from sessionStorage; null when neither has one. */
export function takeAccessToken(env: TokenEnvironment = { location: window.location, history: window.history, storage: window.sessionStorage }): string | null {
  const fragment = env.location.hash.replace(/^#/, '');
  const params = new URLSearchParams(fragment);
  const fromFragment = params.get('token');
  if (fromFragment !== null) {
    params.delete('token');
    const rest = params.toString();
    // replaceState, not assigning location.hash: assigning adds a history entry that still holds the token.
    env.history.replaceState(env.history.state, '', `${env.location.pathname}${env.location.search}${rest ? `#${rest}` : ''}`);
    const token = fromFragment.trim();
    if (token) {
      env.storage.setItem(TOKEN_STORAGE_KEY, token);
      return token;
    }
  }
  return env.storage.getItem(TOKEN_STORAGE_KEY);
}
