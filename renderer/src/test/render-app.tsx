/** Renders the app (or one component) against a fresh store and a fake bridge. */
import { act, render, type RenderResult } from '@testing-library/react';
import type { ReactElement } from 'react';
import type { Snapshot } from '../../../shared/snapshot';
import { App } from '../app';
import { createExobarStore, type ExobarStore, type ExobarStoreOptions } from '../store/exobar-store';
import { StoreProvider } from '../store/store-context';
import { FakeBridge } from './fake-bridge';

export interface Rendered extends RenderResult {
  bridge: FakeBridge;
  store: ExobarStore;
  /** Pushes a snapshot through the bridge and lets React render it. */
  push(snapshot: Snapshot): void;
}

export function renderApp(first?: Snapshot, options: ExobarStoreOptions = {}, ui: ReactElement = <App />): Rendered {
  const bridge = new FakeBridge();
  const store = createExobarStore(bridge, { copy: async () => {}, ...options });
  const result = render(<StoreProvider store={store}>{ui}</StoreProvider>);
  const push = (snapshot: Snapshot) => act(() => bridge.push(snapshot));
  if (first) push(first);
  return { ...result, bridge, store, push };
}
