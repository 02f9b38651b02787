/**
 * What every action slice of the store is made with: the bridge, the store's own `set`
 * and `get`, and `run`, the one way an action calls the bridge with its button
 * disabled (its busy key) and its failure or its words shown as the notice. One runner
 * per store, so every slice disables and reports the same way.
 */
import type { StoreApi } from 'zustand/vanilla';
import type { ExobarBridge } from '../../../shared/bridge';
import { errorMessage } from '../lib/error-message';
import type { ExobarActions, ExobarState, Notice } from './store-types';

export interface ActionContext {
  bridge: ExobarBridge;
  set: StoreApi<ExobarState>['setState'];
  get: () => ExobarState;
  /** Shows a notice (an error, or info such as "Copied …"). */
  notify(kind: Notice['kind'], message: string): void;
  /** Runs one bridge call with its button disabled; a failure becomes the notice, returned words an info notice. */
  run(key: string, call: () => Promise<string | void>): Promise<void>;
  /** Alerts the operator dismissed here: they never come back with the next push. */
  dismissedAlerts: Set<number>;
}

/** One slice of the store's actions, made from the shared context. */
export type ActionSlice<K extends keyof ExobarActions> = (ctx: ActionContext) => Pick<ExobarActions, K>;

export function createActionContext(
  bridge: ExobarBridge,
  set: ActionContext['set'],
  get: ActionContext['get'],
  dismissedAlerts: Set<number>,
): ActionContext {
  let noticeId = 0;
  const notify: ActionContext['notify'] = (kind, message) => set({ notice: { kind, message, id: ++noticeId } });
  const run: ActionContext['run'] = async (key, call) => {
    if (get().busy[key]) return;
    set((s) => ({ busy: { ...s.busy, [key]: true } }));
    try {
      const info = await call();
      if (info) notify('info', info);
    } catch (error) {
      notify('error', errorMessage(error));
    } finally {
      set((s) => {
        const { [key]: _done, ...rest } = s.busy;
        return { busy: rest };
      });
    }
  };
  return { bridge, set, get, notify, run, dismissedAlerts };
}
