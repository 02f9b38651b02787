/**
 * The tolerant building blocks of the exo parser: exo's externally tagged unions,
 * camelCase and snake_case for the same field, extra fields kept out of the way.
 * Casing rules: exo's FrozenModel/TaggedModel fields are camelCase, plain BaseModels
 * and everything written with model_dump_json() are snake_case
 * (exo 0.3.70, src/exo/utils/pydantic_ext.py); exobar accepts either everywhere.
 */
import { z } from 'zod';

const isPlainObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

const snakeToCamel = (key: string) => key.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());

/**
 * One object level with snake_case field names turned into camelCase (a camelCase
 * key present as well wins). Shallow on purpose: nested objects are read by their own
 * schema, and record keys (node, runner and task ids) are never renamed.
 */
export function camelKeys(value: unknown): unknown {
  if (!isPlainObject(value)) return value;
  let out: Record<string, unknown> | null = null;
  for (const key of Object.keys(value)) {
    if (!key.includes('_')) continue;
    const camel = snakeToCamel(key);
    if (camel === key || Object.hasOwn(value, camel)) continue;
    out ??= { ...value };
    out[camel] = value[key];
  }
  return out ?? value;
}

/**
 * An object whose fields may come camelCase or snake_case. Extra fields are never an
 * error: they are dropped from the output (exobar declares only what it reads, and
 * stripping is the cheapest at 2 Hz).
 */
export function exoObject<Shape extends z.core.$ZodShape>(shape: Shape) {
  return z.preprocess(camelKeys, z.object(shape));
}

/**
 * An optional field that may also be null. No transform here: a transform turns off
 * zod's fast path, which triples the parse cost of a task; readers map undefined to null.
 */
export function maybe<T extends z.ZodType>(schema: T) {
  return schema.nullish();
}

/** exo's Memory value: `{"inBytes": n}` (or snake `in_bytes`), or a bare number. */
export const BytesSchema = z.union([z.number(), exoObject({ inBytes: z.number() })]).transform((v) => (typeof v === 'number' ? v : v.inBytes));

/** An externally tagged value `{"Tag": {...}}` split into its tag and body; null when it is not one. */
export function untag(value: unknown): { tag: string; body: unknown } | null {
  if (!isPlainObject(value)) return null;
  const keys = Object.keys(value);
  if (keys.length !== 1) return null;
  const tag = keys[0]!;
  const body = value[tag];
  if (!/^[A-Z]/.test(tag) || !isPlainObject(body)) return null;
  return { tag, body };
}

/** True for a plain JSON object (exo's dicts). */
export { isPlainObject };

/** The first issue of a zod error, as a short line ("shardAssignments.modelId: expected string"). */
export function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid';
  const at = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  return `${at}${issue.message}`;
}
