import type { ExobarBridge } from '../../../shared/bridge';

declare global {
  interface Window {
    /** Set by the Electron preload (contextBridge); absent in a browser. */
    exobar?: ExobarBridge;
  }
}

export {};
