/**
 * What each page action resolves with, read from its route's JSON answer: one decoder
 * per action, used by both bridges (the HTTP bridge on the fetched body, main's IPC
 * handler on the body of the same route dispatched in process), so the page gets the
 * same value whichever way it talks to the node. Answers the page shows are checked
 * with their shared schemas: a server of another version becomes a clear error, never a
 * broken view. Apart from shared/bridge-actions.ts (which the sandboxed preload bundles,
 * so it stays free of runtime imports).
 */
import type { ExoProbeAnswer, SafePairPlan } from './api';
import type { BridgeActionName, BridgeActionResult } from './bridge-actions';
import { CatalogModelSchema, type CatalogModel } from './catalog';
import type { PlaceAgainResult } from './exo-cluster-events';
import { HistoryAnswerSchema } from './history';
import { LogSourceListSchema } from './logs';
import { ModelFitsAnswerSchema } from './model-fit';
import { RequestListSchema } from './request-record';
import { CheckListSchema, CheckStatusSchema } from './sharing-check';
import { z } from 'zod';

const CatalogAnswerSchema = z.looseObject({ models: z.array(CatalogModelSchema) });

/** The models of a `GET /api/models` answer; throws an Error that says what was wrong. */
function catalogOf(value: unknown): CatalogModel[] {
  const result = CatalogAnswerSchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new Error(`The server sent a model list this page does not understand (${issue?.path.join('.') || 'root'}: ${issue?.message ?? 'invalid'})`);
  }
  return result.data.models;
}

/** A launch answers the instance (`{ id }` or `{ instance: { id } }`); the page needs its id. */
function createdId(value: unknown): { id: string } {
  const created = value as { id?: unknown; instance?: { id?: unknown } } | undefined;
  const id = typeof created?.id === 'string' ? created.id : created?.instance?.id;
  if (typeof id !== 'string') throw new Error('The server did not say which instance it created');
  return { id };
}

const nothing = (): void => undefined;

/** Every action that answers with the bundle's bytes rather than JSON is not decoded here (the bridges save it their own way). */
type JsonAction = Exclude<BridgeActionName, 'exportDiagnostics'>;

export const BRIDGE_ANSWERS: { readonly [K in JsonAction]: (body: unknown) => BridgeActionResult<K> } = {
  getSafePairPlan: (body) => body as SafePairPlan,
  launchSafePair: nothing,
  createInstance: createdId,
  updateInstance: nothing,
  stopInstance: nothing,
  stopAll: nothing,
  cancelRequest: nothing,
  retryInstance: nothing,
  unloadInstance: nothing,
  setResidency: nothing,
  setupMlxRuntime: nothing,
  refreshMlxRuntime: nothing,
  listModels: catalogOf,
  checkModelFits: (body) => ModelFitsAnswerSchema.parse(body).models,
  probeExo: (body) => body as ExoProbeAnswer,
  attachExo: nothing,
  detachExo: nothing,
  placeLostModelAgain: (body) => body as PlaceAgainResult,
  dismissLostModel: nothing,
  controlExoProcess: nothing,
  listRequests: (body) => RequestListSchema.parse(body),
  getHistory: (body) => HistoryAnswerSchema.parse(body),
  startSharingCheck: (body) => CheckStatusSchema.parse((body as { status?: unknown } | undefined)?.status),
  getCheck: (body) => CheckStatusSchema.parse(body),
  cancelCheck: nothing,
  listChecks: (body) => CheckListSchema.parse(body),
  listLogSources: (body) => LogSourceListSchema.parse(body),
};

/** The action's value from its route's successful answer body. */
export function bridgeAnswer<K extends JsonAction>(name: K, body: unknown): BridgeActionResult<K> {
  return BRIDGE_ANSWERS[name](body);
}

export const JSON_ACTION_NAMES = Object.keys(BRIDGE_ANSWERS) as JsonAction[];
export type { JsonAction };
