/**
 * Test helpers: open a bundle zip (yauzl) and check that each of its files parses the
 * way its extension says.
 */
import { buffer } from 'node:stream/consumers';
import yauzl from 'yauzl';
import { TIMELINE_COLUMNS } from '../../../electron/core/diagnostics/timeline-csv';

/** Every entry of the zip at `path`, by name, decompressed. */
export async function readZip(path: string): Promise<Map<string, Buffer>> {
  const zip = await yauzl.openPromise(path, { lazyEntries: true, strictFileNames: true });
  const out = new Map<string, Buffer>();
  try {
    for await (const entry of zip.eachEntry()) {
      out.set(entry.fileName, await buffer(await zip.openReadStreamPromise(entry)));
    }
  } finally {
    zip.close();
  }
  return out;
}

/** RFC 4180 rows (quoted cells may hold commas, quotes and line breaks). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else cell += c;
  }
  if (quoted) throw new Error('unterminated quoted cell');
  if (cell !== '' || row.length > 0) {
    row.push(cell);
    rows.push(row);
  }
  return rows;
}

export interface ParsedBundle {
  json: Map<string, unknown>;
  jsonl: Map<string, unknown[]>;
  csv: Map<string, Array<Record<string, string>>>;
  text: Map<string, string>;
}

/** Parses every entry by its extension; throws naming the file that does not parse. */
export function parseBundle(entries: Map<string, Buffer>): ParsedBundle {
  const parsed: ParsedBundle = { json: new Map(), jsonl: new Map(), csv: new Map(), text: new Map() };
  for (const [name, data] of entries) {
    const text = data.toString('utf8');
    try {
      if (name.endsWith('.json')) parsed.json.set(name, JSON.parse(text));
      else if (name.endsWith('.jsonl'))
        parsed.jsonl.set(
          name,
          text
            .split('\n')
            .filter((l) => l !== '')
            .map((l) => JSON.parse(l)),
        );
      else if (name.endsWith('.csv')) {
        const [header, ...rows] = parseCsv(text);
        if (!header || header.join(',') !== TIMELINE_COLUMNS.join(',')) throw new Error(`unexpected header ${header?.join(',')}`);
        for (const row of rows) if (row.length !== header.length) throw new Error(`a row has ${row.length} cells, the header ${header.length}`);
        parsed.csv.set(
          name,
          rows.map((row) => Object.fromEntries(header.map((h, i) => [h, row[i]!]))),
        );
      } else if (name.endsWith('.txt') || name.endsWith('.log')) parsed.text.set(name, text);
      else throw new Error('unexpected file type');
    } catch (error) {
      throw new Error(`${name} does not parse: ${(error as Error).message}`);
    }
  }
  return parsed;
}
