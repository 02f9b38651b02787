/**
 * Stopping models that have requests in flight ends those requests (each fails with
 * `instance_deleted`). The API, the tray and the page ask first: how many requests
 * would end is counted here, once, from the snapshot.
 */
import type { Snapshot } from './snapshot';

/**
 * The requests that end if the instances `ids` stop: every request they hold, queued
 * or on the runner (a queued one fails as surely as one mid-decode).
 */
export function requestsEndingOnStop(snapshot: Pick<Snapshot, 'instances'>, ids: readonly string[]): number {
  const stopping = new Set(ids);
  return snapshot.instances.filter((i) => stopping.has(i.id)).reduce((sum, i) => sum + i.queue.requests.length, 0);
}

/** "1 request will end", "2 requests will end": the words of the question and of the 409. */
export function requestsWillEndWords(count: number): string {
  return `${count} ${count === 1 ? 'request' : 'requests'} will end`;
}
