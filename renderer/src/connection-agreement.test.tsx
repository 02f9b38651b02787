/**
 * One truth on the page: for each connection state the header, the footer's API line and
 * the access message say the same thing. The errors are the bridge's own words
 * (connection-words.ts), as http-bridge.ts sends them.
 */
import { act, cleanup, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { lostMessage, tokenRefusedMessage, unreachableMessage } from './bridge/connection-words';
import { instance, snapshot } from '../../test/support/renderer/fixtures';
import { renderApp } from '../../test/support/renderer/render-app';

afterEach(cleanup);

const ORIGIN = 'http://127.0.0.1:52416';
const API = `${ORIGIN}/v1`;

/** The three places: what each says, and the state each was drawn from. */
function places() {
  const header = screen.getByTestId('app-header');
  const footer = screen.getByTestId('api-url');
  const message = screen.queryByTestId('connection-error');
  return {
    header: header.querySelector('h1')?.textContent,
    footer: footer.textContent,
    message: message?.querySelector('h2')?.textContent ?? null,
    states: [header.dataset.connection, footer.dataset.connection, message?.dataset.connection ?? null],
  };
}

describe('the connection, said the same in the header, the footer and the access message', () => {
  it("connected: the models' state, the API address, no message", () => {
    renderApp(snapshot({ apiBaseUrl: API, instances: [instance()] }));
    expect(places()).toEqual({ header: 'All good', footer: API, message: null, states: ['connected', 'connected', null] });
  });

  it('reconnecting: the stream broke after it worked; the last state stays on screen', () => {
    const { bridge } = renderApp(snapshot({ apiBaseUrl: API, instances: [instance()] }));
    act(() => bridge.connection(lostMessage(ORIGIN, 'fetch failed', 2), 'unreachable'));
    expect(places()).toEqual({
      header: 'Reconnecting…',
      footer: 'Local API not answering: reconnecting…',
      message: 'Connection lost — reconnecting, showing the last known state',
      states: ['reconnecting', 'reconnecting', 'reconnecting'],
    });
    expect(screen.getByTestId('instance-card')).toBeTruthy();
  });

  it('wrong token: exobar runs and refused it; the footer no longer says the API is not running', () => {
    const { bridge } = renderApp();
    act(() => bridge.connection(tokenRefusedMessage(ORIGIN, '/data/token'), 'token_refused'));
    expect(places()).toEqual({
      header: 'Token refused',
      footer: 'Local API running: it refused this page’s token',
      message: 'Token refused',
      states: ['token_refused', 'token_refused', 'token_refused'],
    });
    expect(screen.getByTestId('connection-error').textContent).toContain('exobar is running, but it refused');
    expect(screen.getByTestId('api-url').textContent).not.toContain('not running');
  });

  it('server gone: nothing answers and no snapshot ever came', () => {
    const { bridge } = renderApp();
    act(() => bridge.connection(unreachableMessage(ORIGIN, 'fetch failed'), 'unreachable'));
    expect(places()).toEqual({
      header: 'Cannot reach exobar',
      footer: 'Local API not reachable: nothing answers',
      message: 'Cannot reach exobar',
      states: ['server_gone', 'server_gone', 'server_gone'],
    });
  });

  it('the connection back: all three return to the connected words at once', () => {
    const { bridge, push } = renderApp(snapshot({ apiBaseUrl: API }));
    act(() => bridge.connection(lostMessage(ORIGIN, 'fetch failed', 2), 'unreachable'));
    push(snapshot({ seq: 2, apiBaseUrl: API }));
    expect(places()).toMatchObject({ footer: API, message: null, states: ['connected', 'connected', null] });
  });
});
