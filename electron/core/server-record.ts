/**
 * Where a running exobar server listens, recorded in its data directory
 * (`<dataDir>/server.json`) so `exobar diagnostics` finds it on any port (`--port 0`
 * included). The record holds the URL, the pid and the token file's path, never the
 * token. It is removed on a clean stop; a record whose pid is gone (a crash, a kill -9)
 * is ignored by readers.
 */
import { readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';

export const SERVER_RECORD_FILE_NAME = 'server.json';

export const ServerRecordSchema = z.object({
  /** `http://127.0.0.1:PORT`: the API server's base URL. */
  url: z.url({ protocol: /^https?$/ }),
  pid: z.number().int().positive(),
  /** The token file; null when the token came from EXOBAR_TOKEN (then the file may hold another). */
  tokenPath: z.string().nullable(),
  /** Epoch ms when the server started listening. */
  startedAt: z.number(),
});
export type ServerRecord = z.infer<typeof ServerRecordSchema>;

/** The record's path in a data directory. */
export function serverRecordPath(dataDir: string): string {
  return join(dataDir, SERVER_RECORD_FILE_NAME);
}

/**
 * Writes the record (mode 0600, through a temporary file so a reader never sees half of
 * it) and returns its removal, which removes it only while it is still this process's
 * record. Another server's record is never replaced while that server runs: a second
 * server on the same data directory throws instead, and the commands keep finding the
 * first one.
 */
export async function writeServerRecord(dataDir: string, record: ServerRecord, alive: (pid: number) => boolean = processAlive): Promise<() => Promise<void>> {
  const path = serverRecordPath(dataDir);
  const current = await readRecordFile(path);
  if (current && current.pid !== record.pid && alive(current.pid)) {
    throw new Error(`${path} names another exobar that runs (pid ${current.pid} at ${current.url}): left as it is`);
  }
  const temporary = `${path}.${record.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  await rename(temporary, path);
  return async () => {
    const current = await readRecordFile(path);
    if (current && current.pid === record.pid && current.url === record.url) await unlink(path).catch(() => undefined);
  };
}

/** True when a process with this pid exists (signal 0 checks without sending anything). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else (still alive).
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export type ServerRecordReading = { found: true; record: ServerRecord } | { found: false; reason: string };

/**
 * Reads the record of the server running on `dataDir`, saying why when there is none to
 * use: no record (no server started there, or it stopped cleanly), a malformed one, or
 * one whose process is gone.
 */
export async function readServerRecord(dataDir: string, alive: (pid: number) => boolean = processAlive): Promise<ServerRecordReading> {
  const path = serverRecordPath(dataDir);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return { found: false, reason: `no server has recorded itself in ${path}` };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { found: false, reason: `${path} is not valid JSON` };
  }
  const parsed = ServerRecordSchema.safeParse(json);
  if (!parsed.success) return { found: false, reason: `${path} is malformed (${parsed.error.issues[0]?.message ?? 'invalid'})` };
  if (!alive(parsed.data.pid)) return { found: false, reason: `${path} names pid ${parsed.data.pid}, which is no longer running` };
  return { found: true, record: parsed.data };
}

async function readRecordFile(path: string): Promise<ServerRecord | null> {
  try {
    return ServerRecordSchema.parse(JSON.parse(await readFile(path, 'utf8')));
  } catch {
    return null;
  }
}

/**
 * Writes the record as {@link writeServerRecord} does; a failure to write it costs only
 * that convenience (`exobar diagnostics` finding the server), never the server: it is
 * logged and the removal does nothing.
 */
export async function recordServer(dataDir: string, record: ServerRecord, logger: { warn(obj: object, msg: string): void }): Promise<() => Promise<void>> {
  return writeServerRecord(dataDir, record).catch((error: unknown) => {
    logger.warn({ err: error }, 'could not record the server in the data directory');
    return async () => undefined;
  });
}
