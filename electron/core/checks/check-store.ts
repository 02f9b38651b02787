/**
 * The kept sharing-check reports in `<dataDir>/checks/`: `<id>.json` with the result
 * and `<id>.md` with the markdown report. Read by the check manager (the page's list,
 * `GET /api/checks/{id}` after a restart) and by the diagnostic bundle, which needs no
 * running node to include the latest ones.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SharingCheckResultSchema, type CheckSummary, type SharingCheckResult } from '../../../shared/sharing-check';
import { sharingReportMarkdown } from './sharing-report';

/** The reports' folder inside a data directory. */
export function checksDir(dataDir: string): string {
  return join(dataDir, 'checks');
}

/** A report id as the manager makes them: never a path. */
const ID = /^sharing-[\w-]+$/;

export class CheckStore {
  constructor(readonly dir: string) {}

  /** One kept report, or null (unknown id, unreadable or invalid file). A missing .md is rebuilt from the result. */
  read(id: string): { result: SharingCheckResult; markdown: string } | null {
    if (!ID.test(id)) return null;
    try {
      const result = SharingCheckResultSchema.parse(JSON.parse(readFileSync(join(this.dir, `${id}.json`), 'utf8')));
      let markdown: string;
      try {
        markdown = readFileSync(join(this.dir, `${id}.md`), 'utf8');
      } catch {
        markdown = sharingReportMarkdown(result);
      }
      return { result, markdown };
    } catch {
      return null;
    }
  }

  save(result: SharingCheckResult, markdown: string): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    writeFileSync(join(this.dir, `${result.id}.json`), `${JSON.stringify(result, null, 2)}\n`);
    writeFileSync(join(this.dir, `${result.id}.md`), markdown);
  }

  /** Kept reports, newest first: id, when, models, simulated, the headline ratio. */
  list(): CheckSummary[] {
    return this.ids()
      .map((id) => this.read(id)?.result)
      .filter((r): r is SharingCheckResult => !!r)
      .sort((x, y) => y.startedAt - x.startedAt)
      .map((r) => ({
        id: r.id,
        startedAt: r.startedAt,
        models: r.models.map((m) => m.id),
        simulated: r.simulated,
        decodeRatio: r.decode.ran ? r.decode.decodeRatio : null,
      }));
  }

  /** The newest `n` reports, markdown and JSON, as files for the diagnostic bundle. */
  latest(n = 3): Array<{ name: string; data: string }> {
    return this.list()
      .slice(0, n)
      .flatMap((r) => {
        const kept = this.read(r.id);
        return kept
          ? [
              { name: `${r.id}.md`, data: kept.markdown },
              { name: `${r.id}.json`, data: `${JSON.stringify(kept.result, null, 2)}\n` },
            ]
          : [];
      });
  }

  private ids(): string[] {
    try {
      return readdirSync(this.dir)
        .filter((f) => f.endsWith('.json'))
        .map((f) => f.slice(0, -5))
        .filter((id) => ID.test(id));
    } catch {
      return [];
    }
  }
}
