/**
 * Chooses the bridge at startup: inside the Electron app the preload has set
 * `window.exobar`; anywhere else the page was served by `exobar serve`.
 */
import type { ExobarBridge } from '../../../shared/bridge';
import { takeAccessToken } from './access-token';
import { createHttpBridge } from './http-bridge';
import { createIpcBridge, hasIpcBridge } from './ipc-bridge';

export function pickBridge(): { bridge: ExobarBridge; kind: 'ipc' | 'http' } {
  if (hasIpcBridge()) return { bridge: createIpcBridge(), kind: 'ipc' };
  return { bridge: createHttpBridge({ token: takeAccessToken() }), kind: 'http' };
}
