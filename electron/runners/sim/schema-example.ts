/**
 * A JSON value valid against a JSON schema, for the sim's structured output and tool-call
 * arguments: deterministic, small, and covering what clients send (pydantic's and zod's
 * schemas: objects with required properties, arrays, enums, consts, numbers with bounds,
 * `anyOf`/`oneOf`/`allOf`, `$ref` into `$defs`/`definitions`, nullable type lists).
 * Written by hand because no JSON-schema library is a dependency and the sim needs only
 * examples, not validation (the tests validate with the clients' own libraries).
 */

type Schema = Record<string, unknown>;

const isSchema = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Resolves a local `$ref` (`#/$defs/Name`, `#/definitions/Name`); undefined when it cannot. */
function resolveRef(ref: string, root: Schema): Schema | undefined {
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const part of ref.slice(2).split('/')) {
    if (!isSchema(node)) return undefined;
    node = node[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return isSchema(node) ? node : undefined;
}

function exampleString(schema: Schema, word: string): string {
  switch (schema.format) {
    case 'date-time':
      return '2026-01-01T00:00:00Z';
    case 'date':
      return '2026-01-01';
    case 'time':
      return '00:00:00';
    case 'email':
      return 'sim@example.com';
    case 'uri':
    case 'url':
      return 'https://example.com/';
    case 'uuid':
      return '00000000-0000-4000-8000-000000000000';
    default:
      break;
  }
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : Infinity;
  let text = word;
  while (text.length < min) text += ` ${word}`;
  return text.slice(0, Math.max(min, Math.min(max, text.length)));
}

function exampleNumber(schema: Schema, integer: boolean): number {
  const lo = typeof schema.minimum === 'number' ? schema.minimum : typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum + (integer ? 1 : 0.5) : null;
  const hi = typeof schema.maximum === 'number' ? schema.maximum : typeof schema.exclusiveMaximum === 'number' ? schema.exclusiveMaximum - (integer ? 1 : 0.5) : null;
  let value = lo ?? (hi !== null ? Math.min(hi, 1) : 1);
  if (integer) value = Math.ceil(value);
  return value;
}

function example(schema: unknown, root: Schema, word: string, depth: number): unknown {
  if (!isSchema(schema) || depth > 12) return null;
  if (typeof schema.$ref === 'string') return example(resolveRef(schema.$ref, root), root, word, depth + 1);
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if ('default' in schema && schema.default !== undefined) return schema.default;
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0) {
      // The first option that is not null: an example says something.
      const chosen = options.find((o) => !(isSchema(o) && o.type === 'null')) ?? options[0];
      return example(chosen, root, word, depth + 1);
    }
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) {
    const merged: Schema = {};
    for (const part of schema.allOf) {
      const resolved = isSchema(part) && typeof part.$ref === 'string' ? resolveRef(part.$ref, root) : part;
      if (isSchema(resolved)) Object.assign(merged, resolved);
    }
    return example(merged, root, word, depth + 1);
  }
  let type = schema.type;
  if (Array.isArray(type)) type = type.find((t) => t !== 'null') ?? 'null';
  if (type === undefined) type = isSchema(schema.properties) ? 'object' : schema.items !== undefined ? 'array' : 'string';
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const properties = isSchema(schema.properties) ? schema.properties : {};
      for (const [name, sub] of Object.entries(properties)) out[name] = example(sub, root, name === 'name' ? word : `${word} ${name}`.trim(), depth + 1);
      return out;
    }
    case 'array': {
      const count = typeof schema.minItems === 'number' ? schema.minItems : 1;
      const items = Array.isArray(schema.prefixItems) ? schema.prefixItems : null;
      if (items) return items.map((item) => example(item, root, word, depth + 1));
      return Array.from({ length: Math.min(count, 8) }, () => example(schema.items, root, word, depth + 1));
    }
    case 'string':
      return exampleString(schema, word);
    case 'integer':
      return exampleNumber(schema, true);
    case 'number':
      return exampleNumber(schema, false);
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return null;
  }
}

/** An example of `schema`, its strings made of `word`. */
export function schemaExample(schema: unknown, word = 'sim'): unknown {
  return example(schema, isSchema(schema) ? schema : {}, word, 0);
}
