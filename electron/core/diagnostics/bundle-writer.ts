/**
 * The diagnostic bundle as a zip (yazl, streaming) and its preview. Both build the
 * files through {@link collectBundle}, so the preview lists exactly what a zip holds.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yazl from 'yazl';
import type { DiagnosticContext } from './bundle-context';
import { collectBundle, type BundleContents } from './bundle-files';
import type { StallCause } from './diagnosis';
import type { RedactionCounts } from './redaction';

export interface DiagnosticPreview {
  files: Array<{ name: string; bytes: number }>;
  /** Replacements per kind (prompt text, secrets, user name, ...). */
  redactions: RedactionCounts;
  /** Sum of the files' sizes, uncompressed: the zip is smaller. */
  totalBytes: number;
  truncated: Array<{ name: string; omitted: string }>;
  /** Findings per cause, when a node runs. */
  diagnosis: Partial<Record<StallCause, number>> | null;
}

export interface WrittenBundle extends DiagnosticPreview {
  /** Bytes of the zip itself. */
  zipBytes: number;
  /** Milliseconds from start to the last byte written. */
  elapsedMs: number;
}

function preview(contents: BundleContents): DiagnosticPreview {
  return {
    files: contents.files.map((f) => ({ name: f.name, bytes: f.data.length })),
    redactions: contents.redactions,
    totalBytes: contents.totalBytes,
    truncated: contents.truncated,
    diagnosis: contents.diagnosis?.summary ?? null,
  };
}

/** What `GET /api/diagnostics/preview` answers: the files, their sizes and what was redacted. */
export async function previewDiagnosticBundle(ctx: DiagnosticContext): Promise<DiagnosticPreview> {
  return preview(await collectBundle(ctx));
}

/** A file name for the bundle: `exobar-diagnostics-20250314-101502.zip` (UTC). */
export function diagnosticBundleFileName(at = new Date()): string {
  const stamp = at.toISOString().replace(/\..*$/, '').replace(/[-:]/g, '').replace('T', '-');
  return `exobar-diagnostics-${stamp}.zip`;
}

/** The zip of `contents` as a stream (deflated entries, dated at the export). */
function zipStream(contents: BundleContents): { stream: NodeJS.ReadableStream; bytes: () => number } {
  const zip = new yazl.ZipFile();
  for (const file of contents.files) zip.addBuffer(file.data, file.name, { mtime: contents.exportedAt, mode: 0o100644, compress: true });
  zip.end();
  let bytes = 0;
  zip.outputStream.on('data', (chunk: Buffer) => (bytes += chunk.length));
  return { stream: zip.outputStream, bytes: () => bytes };
}

/**
 * Writes the bundle as a zip to `target`: a stream (an HTTP response: set
 * `Content-Type: application/zip` first) or a file path (written to a temporary file
 * beside it and renamed, mode 0600, so a failed export leaves no half zip).
 */
export async function writeDiagnosticBundle(
  ctx: DiagnosticContext,
  target: Writable | string,
  options: {
    /** Called once every file is built, before the first byte is written (an HTTP route sends its headers here). */
    onReady?: (preview: DiagnosticPreview) => void;
  } = {},
): Promise<WrittenBundle> {
  const started = performance.now();
  const contents = await collectBundle(ctx);
  options.onReady?.(preview(contents));
  const zip = zipStream(contents);
  if (typeof target === 'string') {
    const temporary = `${target}.partial-${randomBytes(4).toString('hex')}`;
    try {
      await pipeline(zip.stream, createWriteStream(temporary, { mode: 0o600 }));
      await rename(temporary, target);
    } catch (error) {
      await unlink(temporary).catch(() => undefined);
      throw error;
    }
  } else {
    await pipeline(zip.stream, target);
  }
  return { ...preview(contents), zipBytes: zip.bytes(), elapsedMs: Math.round(performance.now() - started) };
}
