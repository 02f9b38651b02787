/**
 * Reads a request body as JSON, bounded in size, and validates it with a zod schema.
 * Every failure is a counted, clearly worded 4xx; nothing here can crash the server.
 */
import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import { ApiError, rejected } from './api-error';

/** The least body limit: any chat fits, whatever the models' contexts. */
export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;
/**
 * Bytes of JSON per token of context an agent may send: about 4 characters of text per
 * token, twice over for JSON escaping, tool definitions and the turns' envelopes.
 */
export const BODY_BYTES_PER_CONTEXT_TOKEN = 16;
/** The most a body may be, whatever the contexts: far below memory trouble. */
export const MAX_BODY_LIMIT_BYTES = 64 * 1024 * 1024;

/** A body limit and the words that say where it comes from (said in the 413). */
export interface BodyLimit {
  bytes: number;
  why: string;
}

const mib = (bytes: number) => `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MiB`;

/**
 * The body limit for models whose largest context is `maxContextTokens` (null: none
 * known): agents send their whole context and tool definitions every turn, so the limit
 * grows with the context, from 1 MiB up to the 64 MiB cap.
 */
export function bodyLimitForContext(maxContextTokens: number | null): BodyLimit {
  const sized = DEFAULT_BODY_LIMIT_BYTES + (maxContextTokens ?? 0) * BODY_BYTES_PER_CONTEXT_TOKEN;
  const bytes = Math.min(MAX_BODY_LIMIT_BYTES, sized);
  const why =
    maxContextTokens === null
      ? `${mib(bytes)}, the limit when no model says its context length`
      : `${mib(bytes)}: 1 MiB plus ${BODY_BYTES_PER_CONTEXT_TOKEN} bytes per token of the largest context served (${maxContextTokens} tokens)${sized > MAX_BODY_LIMIT_BYTES ? `, capped at ${mib(MAX_BODY_LIMIT_BYTES)}` : ''}`;
  return { bytes, why };
}

/**
 * Reads the raw body, refusing with 413 as soon as it exceeds `limit` (by Content-Length
 * before reading anything, or while streaming for chunked bodies).
 */
export function readBody(req: IncomingMessage, limit: number, why?: string): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared != null && Number(declared) > limit) return Promise.reject(tooLarge(limit, why));
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        // Stop reading; the 413 goes out with "Connection: close" and the socket ends.
        cleanup();
        req.pause();
        reject(tooLarge(limit, why));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (error: Error): void => {
      cleanup();
      reject(rejected(400, 'body_read_failed', `the request body could not be read: ${error.message}`));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

function tooLarge(limit: number, why?: string): ApiError {
  return new ApiError(413, 'body_too_large', `the request body is larger than ${limit} bytes${why ? ` (exobar's limit, ${why})` : ''}`, {
    rejectedInput: true,
    headers: { Connection: 'close' },
  });
}

/**
 * Checks the declared Content-Type: JSON (`application/json` or `application/*+json`) in
 * UTF-8. A missing type is accepted (minimal clients omit it; the body must still be JSON).
 * Form and text types are refused too because a browser may send them cross-origin without
 * a preflight ("simple requests"), so even a request whose Origin was stripped cannot post
 * a form here.
 */
export function checkJsonContentType(header: string | undefined): ApiError | null {
  if (header == null || header.trim() === '') return null;
  const [rawType, ...params] = header.split(';');
  const type = rawType!.trim().toLowerCase();
  if (type !== 'application/json' && !/^application\/[\w.+-]+\+json$/.test(type)) {
    return rejected(415, 'unsupported_media_type', `send the body as JSON with "Content-Type: application/json" (got ${type || 'an empty type'})`);
  }
  for (const param of params) {
    const [name, value] = param.split('=').map((part) => part.trim());
    if (name?.toLowerCase() !== 'charset' || value == null) continue;
    const charset = value.replace(/^"(.*)"$/, '$1').toLowerCase();
    if (charset !== 'utf-8' && charset !== 'utf8') {
      return rejected(
        415,
        'unsupported_media_type',
        `the body must be UTF-8 JSON (RFC 8259); got charset=${charset}: re-encode it as UTF-8 and send "Content-Type: application/json"`,
      );
    }
  }
  return null;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** Decodes a UTF-8 body strictly (a leading BOM is dropped); invalid bytes are a counted 400. */
export function decodeUtf8(raw: Buffer): string {
  try {
    return utf8.decode(raw);
  } catch {
    throw rejected(400, 'invalid_encoding', 'the request body is not valid UTF-8; JSON must be sent in UTF-8 (RFC 8259)');
  }
}

/** Validates parsed JSON with a zod schema; the message says which field is wrong and why. */
export function validateJson<S extends z.ZodType>(json: unknown, schema: S): z.output<S> {
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw rejected(400, 'invalid_request', `invalid request body:\n${z.prettifyError(parsed.error)}`, first ? first.path.join('.') || null : null);
  }
  return parsed.data;
}

/** Reads, decodes, parses and validates a JSON body: every failure a counted 400, 413 or 415. */
export async function readJsonBody<S extends z.ZodType>(
  req: IncomingMessage,
  schema: S,
  limit: number | BodyLimit = DEFAULT_BODY_LIMIT_BYTES,
): Promise<z.output<S>> {
  const typeRefusal = checkJsonContentType(req.headers['content-type']);
  if (typeRefusal) throw typeRefusal;
  const raw = typeof limit === 'number' ? await readBody(req, limit) : await readBody(req, limit.bytes, limit.why);
  const text = decodeUtf8(raw);
  let json: unknown;
  try {
    json = text.length === 0 ? undefined : JSON.parse(text);
  } catch (error) {
    throw rejected(400, 'invalid_json', `the request body is not valid JSON: ${(error as Error).message}`);
  }
  if (json === undefined) throw rejected(400, 'invalid_json', 'the request body is empty; send a JSON object');
  return validateJson(json, schema);
}
