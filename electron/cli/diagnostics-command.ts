/**
 * `exobar diagnostics`: writes the diagnostic bundle (docs/diagnostics.md) to a file.
 * Asks the data directory's running server first (it holds the live state: snapshot,
 * events, timelines), found through that directory's own record only (server-client.ts);
 * when none runs there, exports what the data directory holds (runner logs and settings)
 * and says why. Write failures are said in words (the folder that does not exist), never
 * as a raw errno with the temporary file's name.
 */
import { stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { resolveDataDir } from '../core/data-dir';
import { packageVersion } from '../core/package-root';
import { diagnosticBundleFileName, writeDiagnosticBundle } from '../core/diagnostics';
import { fetchDiagnosticBundle, ServerRefusedError, ServerUnreachableError } from '../core/diagnostics/remote-export';
import { findServer, noTokenMessage, tokenRefusedMessage } from './server-client';
import { flagValue, parseFlags, type CliCommand } from './cli-command';

const USAGE = `usage: exobar diagnostics [--out FILE] [--data-dir D] [--url URL] [--offline] [--threshold-ms N]

Writes a diagnostic bundle (a zip to attach to a bug report): snapshot, recent events,
per-request timeline, runner log tails, fast-synch policy, system and settings, with a
diagnosis of slow time to first token. Prompts, completions, keys, tokens, the user
and host names, non-loopback IP addresses and the home directory are removed.

  --out FILE          where to write (default ./exobar-diagnostics-<time>.zip); its folder must exist
  --data-dir D        the data directory (default ~/.exobar or $EXOBAR_DATA_DIR)
  --url URL           the running server (default: the one recorded in <data-dir>/server.json,
                      on whatever port it listens; when none runs there, the offline bundle)
  --offline           do not ask a server: export the data directory's logs and settings
  --threshold-ms N    a time to first token from N ms on is diagnosed (default 1000)
  -h, --help          show this help

The control token comes from $EXOBAR_TOKEN or <data-dir>/token.`;

const DirSchema = z.string().min(1, 'expected a path');
const UrlSchema = z.url({ protocol: /^https?$/, error: 'expected an http URL such as http://127.0.0.1:52416' });
const ThresholdSchema = z.string().regex(/^\d+$/, 'expected whole milliseconds, e.g. 500').transform(Number);

/** Why `out` cannot be written, in words, before anything is asked or collected; null when it can be tried. */
async function outProblem(out: string): Promise<string | null> {
  const folder = dirname(out);
  const info = await stat(folder).catch(() => null);
  if (!info) return `cannot write ${out}: the folder ${folder} does not exist`;
  if (!info.isDirectory()) return `cannot write ${out}: ${folder} is not a folder`;
  if ((await stat(out).catch(() => null))?.isDirectory()) return `cannot write ${out}: it is a folder; give a file name such as ${out}/exobar-diagnostics.zip`;
  return null;
}

/** A failed write in words: what went wrong with `out`, not the temporary file beside it. */
function writeFailure(out: string, error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  const folder = dirname(out);
  const why =
    code === 'ENOENT'
      ? `the folder ${folder} does not exist`
      : code === 'EACCES' || code === 'EPERM'
        ? `no permission to write in ${folder}`
        : code === 'ENOSPC'
          ? `the disk holding ${folder} is full`
          : code === 'EROFS'
            ? `${folder} is on a read-only disk`
            : code === 'EISDIR'
              ? 'it is a folder'
              : code
                ? `the system said ${code}`
                : (error as Error).message;
  return `cannot write ${out}: ${why}`;
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

    const problem = await outProblem(out);
    if (problem) {
      io.err(`exobar diagnostics: ${problem}`);
      return 1;
    }

    let offlineWhy: string | null = null;
    if (!flags.offline) {
      const found = await findServer(dataDir, explicitUrl, io.env);
      if (!found.found) {
        offlineWhy = `no exobar is running for ${dataDir}: ${found.reason}`;
      } else if (!found.server.token) {
        offlineWhy = noTokenMessage(found.server);
      } else {
        const { server } = found;
        try {
          const { bytes } = await fetchDiagnosticBundle({ baseUrl: server.url, token: found.server.token, outPath: out, thresholdMs });
          io.out(`exobar diagnostics: live bundle from the server at ${server.url}${server.pid !== null ? ` (pid ${server.pid})` : ''}`);
          io.out(`wrote ${out} (${bytes} bytes) from the server at ${server.url}`);
          return 0;
        } catch (error) {
          // A server that answered with an error is reported, not papered over with a poorer bundle.
          if (error instanceof ServerRefusedError) {
            io.err(`exobar diagnostics: ${error.status === 401 ? tokenRefusedMessage(server) : error.message}`);
            return 1;
          }
          if (!(error instanceof ServerUnreachableError)) {
            io.err(`exobar diagnostics: ${writeFailure(out, error)}`);
            return 1;
          }
          if (explicitUrl) {
            io.err(`exobar diagnostics: ${error.message}`);
            return 1;
          }
          offlineWhy = `${server.source} did not answer; ${error.message}; exporting the data directory ${dataDir} (logs and settings)`;
        }
      }
    }
    io.err(
      offlineWhy === null
        ? 'exobar diagnostics: writing the offline bundle (--offline: no live state, no diagnosis)'
        : `exobar diagnostics: writing the offline bundle (no live state, no diagnosis): ${offlineWhy}`,
    );
    let written: Awaited<ReturnType<typeof writeDiagnosticBundle>>;
    try {
      written = await writeDiagnosticBundle(
        { node: null, dataDir, settings: null, version: packageVersion('unknown'), diagnosis: thresholdMs !== undefined ? { thresholdMs } : undefined },
        out,
      );
    } catch (error) {
      io.err(`exobar diagnostics: ${writeFailure(out, error)}`);
      return 1;
    }
    const removed = Object.entries(written.redactions)
      .filter(([, n]) => n > 0)
      .map(([kind, n]) => `${kind} ${n}`)
      .join(', ');
    io.out(`wrote ${out} (${written.zipBytes} bytes, ${written.files.length} files) from ${dataDir}${removed ? `; redacted: ${removed}` : ''}`);
    return 0;
  },
};
