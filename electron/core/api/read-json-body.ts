/**
 * Reads a request body as JSON, bounded in size, and validates it with a zod schema.
 * Every failure is a counted, clearly worded 4xx; nothing here can crash the server.
 */
import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import { ApiError, rejected } from './api-error';

/** Default body limit: far above any chat a local model can take, far below memory trouble. */
export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * Reads the raw body, refusing with 413 as soon as it exceeds `limit` (by Content-Length
 * before reading anything, or while streaming for chunked bodies).
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared != null && Number(declared) > limit) return Promise.reject(tooLarge(limit));
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
        reject(tooLarge(limit));
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

function tooLarge(limit: number): ApiError {
  return new ApiError(413, 'body_too_large', `the request body is larger than ${limit} bytes`, {
    rejectedInput: true,
    headers: { Connection: 'close' },
  });
}

/**
 * Content types a browser may send cross-origin without a preflight ("simple requests"):
 * refused, so that even a request whose Origin was stripped cannot post a form here.
 */
const FORM_TYPES = ['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain'];

/** Reads, parses and validates a JSON body; the zod message says which field is wrong and why. */
export async function readJsonBody<S extends z.ZodType>(req: IncomingMessage, schema: S, limit = DEFAULT_BODY_LIMIT_BYTES): Promise<z.output<S>> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (FORM_TYPES.includes(type)) {
    throw rejected(415, 'unsupported_media_type', `send the body as JSON with "Content-Type: application/json" (got ${type})`);
  }
  const raw = await readBody(req, limit);
  let json: unknown;
  try {
    json = raw.length === 0 ? undefined : JSON.parse(raw.toString('utf8'));
  } catch (error) {
    throw rejected(400, 'invalid_json', `the request body is not valid JSON: ${(error as Error).message}`);
  }
  if (json === undefined) throw rejected(400, 'invalid_json', 'the request body is empty; send a JSON object');
  return validateJson(json, schema);
}

/** Validates an already parsed body; the zod message says which field is wrong and why (a counted 400). */
export function validateJson<S extends z.ZodType>(json: unknown, schema: S): z.output<S> {
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw rejected(400, 'invalid_request', `invalid request body:\n${z.prettifyError(parsed.error)}`, first ? first.path.join('.') || null : null);
  }
  return parsed.data;
}
