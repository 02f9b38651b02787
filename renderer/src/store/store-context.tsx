/**
 * Hands the store to components. A context (not a module singleton) so each test
 * renders against its own store and fake bridge.
 */
import { createContext, useContext, type ReactNode } from 'react';
import { useStore } from 'zustand';
import type { ExobarActions, ExobarState, ExobarStore } from './exobar-store';

const StoreContext = createContext<ExobarStore | null>(null);

export function StoreProvider({ store, children }: { store: ExobarStore; children: ReactNode }) {
  return <StoreContext.Provider value={store}>{children}</StoreContext.Provider>;
}

function useStoreApi(): ExobarStore {
  const store = useContext(StoreContext);
  if (!store) throw new Error('useExobar must be used inside <StoreProvider>');
  return store;
}

/**
 * Reads one slice of the store; the component re-renders only when that slice changes
 * (by reference). Return existing objects from the selector, not new ones.
 */
export function useExobar<T>(selector: (state: ExobarState) => T): T {
  return useStore(useStoreApi(), selector);
}

/** The store's actions; a stable object, so reading it never re-renders. */
export function useActions(): ExobarActions {
  return useStore(useStoreApi(), (s) => s.actions);
}
