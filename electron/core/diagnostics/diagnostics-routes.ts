/**
 * The diagnostic bundle's control endpoints, for the API server's `extraRoutes`
 * (start-core.ts), both behind the bearer token:
 *
 * - `GET /api/diagnostics/preview`: the files, their sizes, what was redacted, and the
 *   diagnosis summary; nothing is written.
 * - `POST /api/diagnostics`: the zip itself (`application/zip`, as an attachment).
 *
 * Both take `?threshold_ms=N` to change the diagnosis's slow-TTFT threshold.
 */
import { z } from 'zod';
import { rejected } from '../api/api-error';
import type { ApiRoute, RouteContext } from '../api/route-types';
import type { DiagnosticContext } from './bundle-context';
import { diagnosticBundleFileName, previewDiagnosticBundle, writeDiagnosticBundle } from './bundle-writer';

export interface DiagnosticsRoutesOptions {
  /** Runner logs, the token and settings.json live here. */
  dataDir: string;
  /** The settings now (they can change while the app runs). */
  getSettings: () => unknown;
  /** Further secrets to redact (the control token is found in <dataDir>/token anyway). */
  secrets?: readonly string[];
  /** The attached exo's material for the bundle's exo/ folder (attach mode); null when none. */
  exo?: DiagnosticContext['exo'];
  /** This Mac's exo as exobar runs it (its log tails go in the bundle). */
  exoProcess?: DiagnosticContext['exoProcess'];
  /** The history's aggregates for `history.json`. */
  history?: DiagnosticContext['history'];
}

const QuerySchema = z.strictObject({
  threshold_ms: z
    .string()
    .regex(/^\d+(\.\d+)?$/, 'expected milliseconds, e.g. 500')
    .transform(Number)
    .pipe(z.number().max(3_600_000, 'at most one hour'))
    .optional(),
});

function context(ctx: RouteContext, options: DiagnosticsRoutesOptions): DiagnosticContext {
  const parsed = QuerySchema.safeParse(Object.fromEntries(ctx.url.searchParams));
  if (!parsed.success) throw rejected(400, 'invalid_query', `invalid query parameters:\n${z.prettifyError(parsed.error)}`);
  return {
    node: ctx.node,
    exoProcess: options.exoProcess ?? null,
    dataDir: options.dataDir,
    settings: options.getSettings(),
    version: ctx.node.snapshot().version,
    secrets: options.secrets,
    exo: options.exo,
    history: options.history,
    diagnosis: parsed.data.threshold_ms !== undefined ? { thresholdMs: parsed.data.threshold_ms } : undefined,
  };
}

/** GET /api/diagnostics/preview and POST /api/diagnostics. */
export function diagnosticsRoutes(options: DiagnosticsRoutesOptions): ApiRoute[] {
  return [
    {
      method: 'GET',
      path: '/api/diagnostics/preview',
      auth: true,
      async handle(ctx) {
        ctx.json(200, await previewDiagnosticBundle(context(ctx, options)));
      },
    },
    {
      method: 'POST',
      path: '/api/diagnostics',
      auth: true,
      async handle(ctx) {
        const diagnosticContext = context(ctx, options);
        const written = await writeDiagnosticBundle(diagnosticContext, ctx.res, {
          // Headers go out only once every file is built: a failure before that is still a JSON error.
          onReady: (preview) =>
            ctx.res.writeHead(200, {
              'Content-Type': 'application/zip',
              'Content-Disposition': `attachment; filename="${diagnosticBundleFileName()}"`,
              'Cache-Control': 'no-store',
              'X-Exobar-Bundle-Files': String(preview.files.length),
            }),
        });
        ctx.log.info({ files: written.files.length, zipBytes: written.zipBytes, ms: written.elapsedMs }, 'diagnostic bundle exported');
      },
    },
  ];
}
