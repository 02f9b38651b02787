/**
 * Checks the model catalog that came over the network (`GET /api/models`) before the
 * page shows it: a server of another version must become a clear error, not a broken
 * list. The engine and size class are checked against the values this page knows
 * (page and server come from one build); fields the page does not read pass through.
 */
import { z } from 'zod';
import type { CatalogModel } from '../../../shared/catalog';
import { EngineSchema } from '../../../shared/snapshot';

const CatalogModelSchema = z.looseObject({
  id: z.string().min(1),
  name: z.string(),
  engine: EngineSchema,
  simulated: z.boolean(),
  memoryBytes: z.number().finite().nonnegative(),
  sizeClass: z.enum(['small', 'medium', 'large']),
  path: z.string().optional(),
});

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
