/**
 * Loads and unloads as rows of the request log, beside the requests they delayed or
 * followed: a local model loaded (on request or by a launch), unloaded (idle, evicted,
 * by the operator), a load refused, and a model exobar placed on the attached exo for a
 * request or deleted there once idle. Read from the node's event log, the one place
 * every such step is recorded; an exo placement reaches it through {@link placementEvent}.
 */
import type { ModelEventRecord } from '../../../shared/request-record';
import { formatDuration } from '../../../shared/residency';
import type { ExoPlacementEvent } from '../exo/launch/exo-place-on-demand';
import type { NewNodeEvent, NodeEvent } from '../events/node-event';

type ModelEventRow = Omit<ModelEventRecord, 'kind' | 'at'>;

const UNLOAD_WORDS = { idle: 'idle', evicted: 'evicted to make room for another model', operator: 'unloaded by the operator' } as const;

/** The request log's row for a node event, or null when it is not a load or an unload. */
export function modelEventRow(event: NodeEvent): ModelEventRow | null {
  switch (event.kind) {
    case 'instance_loaded':
      return {
        model: event.data.model,
        instance: event.instanceId,
        event: 'load',
        reason: event.data.onDemand ? 'on demand for a request' : 'launched',
        durationMs: Math.round(event.data.loadMs),
      };
    case 'instance_unloaded':
      return {
        model: event.data.model,
        instance: event.instanceId,
        event: 'unload',
        reason: event.data.reason === 'idle' ? `idle ${formatDuration(event.data.idleMs)}` : UNLOAD_WORDS[event.data.reason],
        durationMs: null,
      };
    case 'model_load_refused':
      return { model: event.data.model, instance: null, event: 'load_refused', reason: event.data.reason.slice(0, 300), durationMs: null };
    case 'exo_model_placed':
      return {
        model: event.data.model,
        instance: event.data.exoInstanceId,
        event: 'load',
        reason: 'placed on exo on demand for a request',
        durationMs: Math.round(event.data.loadMs),
      };
    case 'exo_model_deleted':
      return {
        model: event.data.model,
        instance: event.data.exoInstanceId,
        event: 'unload',
        reason: `deleted on exo, idle ${formatDuration(event.data.idleMs)}`,
        durationMs: null,
      };
    default:
      return null;
  }
}

/** An exo placement on demand as a node event (a refusal is the loader's `model_load_refused`). */
export function placementEvent(event: ExoPlacementEvent): NewNodeEvent {
  switch (event.kind) {
    case 'placed':
      return { kind: 'exo_model_placed', data: { model: event.model, exoInstanceId: event.instanceId, loadMs: event.loadMs } };
    case 'deleted':
      return { kind: 'exo_model_deleted', data: { model: event.model, exoInstanceId: event.instanceId, reason: event.reason, idleMs: event.idleMs } };
    case 'refused':
      return { kind: 'model_load_refused', data: { model: event.model, code: event.code, reason: event.reason.slice(0, 500) } };
  }
}

/** Writes every load and unload of the node's event log into the request log; returns the unsubscribe. */
export function logModelEvents(
  eventLog: { subscribe(listener: (event: NodeEvent) => void): () => void },
  log: { recordModelEvent(row: ModelEventRow): void },
): () => void {
  return eventLog.subscribe((event) => {
    const row = modelEventRow(event);
    if (row) log.recordModelEvent(row);
  });
}
