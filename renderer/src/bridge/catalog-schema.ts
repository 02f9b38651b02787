/**
 * Checks the model catalog that came over the network (`GET /api/models`) before the
 * page shows it: a server of another version must become a clear error, not a broken
 * list. The schema is the catalog's own (shared/catalog.ts), so page and server check
 * one definition; fields the page does not read pass through.
 */
import { z } from 'zod';
import { CatalogModelSchema, type CatalogModel } from '../../../shared/catalog';

export const CatalogAnswerSchema = z.looseObject({ models: z.array(CatalogModelSchema) });

/** The models of a `GET /api/models` answer; throws an Error that says what was wrong. */
export function parseCatalogAnswer(value: unknown): CatalogModel[] {
  const result = CatalogAnswerSchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new Error(`The server sent a model list this page does not understand (${issue?.path.join('.') || 'root'}: ${issue?.message ?? 'invalid'})`);
  }
  return result.data.models;
}
