/**
 * The latest GPU sharing check reports in the diagnostic bundle (`checks/<id>.md` and
 * `checks/<id>.json`): read from the data directory, so an export with no node running
 * has them too, and redacted like every other file (model ids may be local paths).
 */
import { CheckStore, checksDir } from '../checks/check-store';
import type { Redactor } from './redaction';

/** How many reports the bundle keeps (newest first). */
export const LATEST_CHECKS = 3;

export function checkBundleFiles(dataDir: string, r: Redactor, n = LATEST_CHECKS): Array<{ name: string; data: Buffer }> {
  return new CheckStore(checksDir(dataDir)).latest(n).map((report) => {
    const text = report.name.endsWith('.json') ? `${JSON.stringify(r.value(JSON.parse(report.data) as unknown), null, 2)}\n` : r.text(report.data);
    return { name: `checks/${report.name}`, data: Buffer.from(text, 'utf8') };
  });
}
