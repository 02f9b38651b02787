/**
 * What every experiment of the sharing check gets: the node, the two models, the
 * check's own requests, the cancel signal and the progress reporter.
 */
import type { CatalogModel } from '../../../shared/catalog';
import type { ExobarNode } from '../node/node-types';
import type { CheckRequests } from './check-requests';

export interface CheckContext {
  node: ExobarNode;
  /** A prefills the long prompt; B is measured. */
  a: CatalogModel;
  b: CatalogModel;
  requests: CheckRequests;
  signal: AbortSignal;
  /** Says the step in words; `fraction` of the whole check, 0..1. */
  progress(step: string, fraction: number): void;
}

/** Thrown where a cancelled check stops. */
export class CheckCancelled extends Error {
  override name = 'CheckCancelled';
  constructor() {
    super('the check was cancelled');
  }
}

export function throwIfCancelled(signal: AbortSignal): void {
  if (signal.aborted) throw new CheckCancelled();
}

/** Waits for `promise`, or throws CheckCancelled as soon as the check is cancelled. */
export function unlessCancelled<T>(signal: AbortSignal, promise: Promise<T>): Promise<T> {
  throwIfCancelled(signal);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new CheckCancelled());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A's long prompt: `requested` tokens capped by A's context (room left for the answer). */
export function longPromptTokens(a: CatalogModel, requested: number): number {
  const context = a.contextLength ?? requested + 64;
  return Math.max(64, Math.min(requested, context - 64));
}
