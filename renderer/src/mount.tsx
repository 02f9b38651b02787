/**
 * Mounts the page on an element with a given bridge. The browser entry (main.tsx) and
 * the Electron build (through electron-vite) both call this, so the app is one module
 * to import, not a script with side effects.
 */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import type { ExobarBridge } from '../../shared/bridge';
import { App } from './app';
import { createExobarStore, type ExobarStoreOptions } from './store/exobar-store';
import { StoreProvider } from './store/store-context';
import './styles/app.css';

/** Renders the app into `element`; returns a function that unmounts it and closes the bridge subscriptions. */
export function mountExobar(element: HTMLElement, bridge: ExobarBridge, options?: ExobarStoreOptions): () => void {
  const store = createExobarStore(bridge, options);
  const root = createRoot(element);
  root.render(
    <StrictMode>
      <StoreProvider store={store}>
        <App />
      </StoreProvider>
    </StrictMode>,
  );
  return () => {
    root.unmount();
    store.dispose();
  };
}
