/**
 * Fetches a diagnostic bundle from a running exobar server (`POST /api/diagnostics`)
 * into a file, for `exobar diagnostics`. The file appears only once complete.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';

/** No server answered at the address (nothing listens, or it did not respond in time). */
export class ServerUnreachableError extends Error {
  override name = 'ServerUnreachableError';
}

/** The server answered, but not with a bundle (`status`: 401 for a refused token). */
export class ServerRefusedError extends Error {
  override name = 'ServerRefusedError';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export interface RemoteExportOptions {
  /** `http://127.0.0.1:52416`. */
  baseUrl: string;
  token: string;
  outPath: string;
  thresholdMs?: number;
  timeoutMs?: number;
}

/** Downloads the bundle; resolves with the zip's size. Throws ServerUnreachableError, ServerRefusedError with the server's message, or a write's error. */
export async function fetchDiagnosticBundle(options: RemoteExportOptions): Promise<{ bytes: number }> {
  const url = new URL('/api/diagnostics', options.baseUrl);
  if (options.thresholdMs !== undefined) url.searchParams.set('threshold_ms', String(options.thresholdMs));
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { Authorization: `Bearer ${options.token}` },
      signal: AbortSignal.timeout(options.timeoutMs ?? 60_000),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
    throw new ServerUnreachableError(`no exobar server answered at ${options.baseUrl} (${cause})`);
  }
  if (!response.ok || !response.body) {
    let message = `${response.status} ${response.statusText}`;
    try {
      const body = (await response.json()) as { error?: { message?: string } };
      if (body.error?.message) message = `${message}: ${body.error.message}`;
    } catch {
      // Not JSON: the status says enough.
    }
    throw new ServerRefusedError(`the server refused the export (${message})`, response.status);
  }
  const type = response.headers.get('content-type') ?? '';
  if (!type.startsWith('application/zip')) throw new Error(`the server answered ${type || 'no content type'} instead of a zip`);
  const temporary = `${options.outPath}.partial-${randomBytes(4).toString('hex')}`;
  let bytes = 0;
  try {
    const body = Readable.fromWeb(response.body as unknown as WebReadableStream<Uint8Array>);
    body.on('data', (chunk: Buffer) => (bytes += chunk.length));
    await pipeline(body, createWriteStream(temporary, { mode: 0o600 }));
    await rename(temporary, options.outPath);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
  return { bytes };
}
