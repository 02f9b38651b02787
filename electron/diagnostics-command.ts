/**
 * `exobar diagnostics`: writes the diagnostic bundle (docs/diagnostics.md) to a file.
 * Asks the running server first (it holds the live state: snapshot, events, timelines),
 * found through the record it keeps in the data directory (core/server-record.ts);
 * when none answers, exports what the data directory holds (runner logs and settings)
 * and says why.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { DEFAULT_API_HOST, DEFAULT_API_PORT } from './core/api/api-server';
import { resolveDataDir } from './core/data-dir';
import { packageVersion } from './core/package-root';
import { diagnosticBundleFileName, writeDiagnosticBundle } from './core/diagnostics';
import { fetchDiagnosticBundle, ServerUnreachableError } from './core/diagnostics/remote-export';
import { TOKEN_FILE_NAME } from './core/auth-token';
import { readServerRecord, SERVER_RECORD_FILE_NAME } from './core/server-record';
import { flagValue, parseFlags, type CliCommand } from './cli-command';

const USAGE = `usage: exobar diagnostics [--out FILE] [--data-dir D] [--url URL] [--offline] [--threshold-ms N]

Writes a diagnostic bundle (a zip to attach to a bug report): snapshot, recent events,
per-request timeline, runner log tails, fast-synch policy, system and settings, with a
diagnosis of slow time to first token. Prompts, completions, keys, tokens, the user
and host names, non-loopback IP addresses and the home directory are removed.

  --out FILE          where to write (default ./exobar-diagnostics-<time>.zip)
  --data-dir D        the data directory (default ~/.exobar or $EXOBAR_DATA_DIR)
  --url URL           the running server (default: the one recorded in <data-dir>/server.json,
                      on whatever port it listens; else http://127.0.0.1:<apiPort from settings>)
  --offline           do not ask a server: export the data directory's logs and settings
  --threshold-ms N    a time to first token from N ms on is diagnosed (default 1000)
  -h, --help          show this help

The control token comes from $EXOBAR_TOKEN or <data-dir>/token.`;

const DirSchema = z.string().min(1, 'expected a path');
const UrlSchema = z.url({ protocol: /^https?$/, error: 'expected an http URL such as http://127.0.0.1:52416' });
const ThresholdSchema = z.string().regex(/^\d+$/, 'expected whole milliseconds, e.g. 500').transform(Number);

export async function readText(path: string | null): Promise<string | null> {
  if (path === null) return null;
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch {
    return null;
  }
}

/** The server's address from the data directory's settings (apiPort), else the default. */
async function defaultServerUrl(dataDir: string): Promise<string> {
  let port = DEFAULT_API_PORT;
  const text = await readText(join(dataDir, 'settings.json'));
  if (text) {
    try {
      const apiPort = (JSON.parse(text) as { apiPort?: unknown }).apiPort;
      if (typeof apiPort === 'number' && Number.isInteger(apiPort) && apiPort > 0 && apiPort < 65536) port = apiPort;
    } catch {
      // A broken settings file: the default port it is.
    }
  }
  return `http://${DEFAULT_API_HOST}:${port}`;
}

export interface ServerToAsk {
  url: string;
  /** The server's pid, from its record; null for a URL given or guessed from the settings. */
  pid: number | null;
  tokenPath: string;
  /** Why this address, when it is a guess (said if nothing answers there). */
  why: string;
}

/**
 * The server to ask: the one given with --url; else the one recorded in the data
 * directory (`server.json`, written by every running server, any port); else the
 * settings' apiPort, for a server that wrote no record.
 */
export async function findServer(dataDir: string, explicitUrl: string | null): Promise<ServerToAsk> {
  const tokenPath = join(dataDir, TOKEN_FILE_NAME);
  if (explicitUrl) return { url: explicitUrl, pid: null, tokenPath, why: `--url ${explicitUrl}` };
  const recorded = await readServerRecord(dataDir);
  if (recorded.found) {
    const { url, pid } = recorded.record;
    return {
      url,
      pid,
      tokenPath: recorded.record.tokenPath ?? tokenPath,
      why: `the server recorded in ${SERVER_RECORD_FILE_NAME} (pid ${pid}) did not answer`,
    };
  }
  return { url: await defaultServerUrl(dataDir), pid: null, tokenPath, why: recorded.reason };
}

export const diagnosticsCommand: CliCommand = {
  name: 'diagnostics',
  summary: 'write a diagnostic bundle (zip) for a bug report, nothing private in it',
  usage: USAGE,
  async run(argv, io) {
    const flags = parseFlags(argv, {
      out: { type: 'string' },
      'data-dir': { type: 'string' },
      url: { type: 'string' },
      offline: { type: 'boolean' },
      'threshold-ms': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    });
    if (flags.help) {
      io.out(USAGE);
      return 0;
    }
    const out = resolve(flags.out === undefined ? diagnosticBundleFileName() : flagValue('out', DirSchema, flags.out));
    const dataDir = resolveDataDir(flags['data-dir'] === undefined ? null : flagValue('data-dir', DirSchema, flags['data-dir']), io.env);
    const thresholdMs = flags['threshold-ms'] === undefined ? undefined : flagValue('threshold-ms', ThresholdSchema, flags['threshold-ms']);
    const explicitUrl = flags.url === undefined ? null : flagValue('url', UrlSchema, flags.url);

    if (!flags.offline) {
      const server = await findServer(dataDir, explicitUrl);
      const token = io.env.EXOBAR_TOKEN || (await readText(server.tokenPath));
      if (!token) {
        io.err(
          `exobar diagnostics: writing the offline bundle (no live state, no diagnosis): no control token (set EXOBAR_TOKEN or check ${server.tokenPath})`,
        );
      } else {
        try {
          const { bytes } = await fetchDiagnosticBundle({ baseUrl: server.url, token, outPath: out, thresholdMs });
          io.out(`exobar diagnostics: live bundle from the server at ${server.url}${server.pid !== null ? ` (pid ${server.pid})` : ''}`);
          io.out(`wrote ${out} (${bytes} bytes) from the server at ${server.url}`);
          return 0;
        } catch (error) {
          // A server that answered with an error is reported, not papered over with a poorer bundle.
          if (!(error instanceof ServerUnreachableError) || explicitUrl) {
            io.err(`exobar diagnostics: ${(error as Error).message}`);
            return 1;
          }
          io.err(
            `exobar diagnostics: writing the offline bundle (no live state, no diagnosis): ${server.why}; ${error.message}; ` +
              `exporting the data directory ${dataDir} (logs and settings)`,
          );
        }
      }
    } else {
      io.err('exobar diagnostics: writing the offline bundle (--offline: no live state, no diagnosis)');
    }
    const written = await writeDiagnosticBundle(
      { node: null, dataDir, settings: null, version: packageVersion('unknown'), diagnosis: thresholdMs !== undefined ? { thresholdMs } : undefined },
      out,
    );
    const removed = Object.entries(written.redactions)
      .filter(([, n]) => n > 0)
      .map(([kind, n]) => `${kind} ${n}`)
      .join(', ');
    io.out(`wrote ${out} (${written.zipBytes} bytes, ${written.files.length} files) from ${dataDir}${removed ? `; redacted: ${removed}` : ''}`);
    return 0;
  },
};
