/** The store's promises about crashes and corruption, on real files. */
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { JsonlStore } from './jsonl-store';

const Row = z.object({ n: z.number() });
let dir: string;
const open = (capBytes = 1 << 20) => new JsonlStore({ path: join(dir, 'rows.jsonl'), schema: Row, flushMs: 5, capBytes, compact: (rows) => rows.slice(-10) });

afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('JsonlStore', () => {
  it('keeps every row across a reopen, and drops only a torn last line', () => {
    dir = mkdtempSync(join(tmpdir(), 'jsonl-'));
    const store = open();
    for (let n = 0; n < 5; n++) store.append({ n });
    store.close();
    // A kill in the middle of the next write.
    appendFileSync(join(dir, 'rows.jsonl'), '{"n":5');
    const again = open();
    expect(again.all().map((r) => r.n)).toEqual([0, 1, 2, 3, 4]);
    expect(again.status()).toMatchObject({ tornLines: 1, problem: null });
    again.append({ n: 6 });
    again.close();
    expect(
      open()
        .all()
        .map((r) => r.n),
    ).toEqual([0, 1, 2, 3, 4, 6]);
  });

  it('sets a corrupt file aside, says so, and starts anew with the rows that read', () => {
    dir = mkdtempSync(join(tmpdir(), 'jsonl-'));
    writeFileSync(join(dir, 'rows.jsonl'), '{"n":1}\nnot json\n{"n":"two"}\n{"n":3}\n');
    const store = open();
    expect(store.all().map((r) => r.n)).toEqual([1, 3]);
    const status = store.status();
    expect(status.problem).toMatch(/2 unreadable lines .*set aside as rows\.jsonl\.corrupt-/);
    expect(existsSync(status.setAsidePath!)).toBe(true);
    expect(readFileSync(status.setAsidePath!, 'utf8')).toContain('not json');
    expect(readFileSync(join(dir, 'rows.jsonl'), 'utf8')).toBe('{"n":1}\n{"n":3}\n');
  });

  it('compacts when the file passes its cap, so the disk use stays bounded', () => {
    dir = mkdtempSync(join(tmpdir(), 'jsonl-'));
    const store = open(200);
    for (let n = 0; n < 100; n++) {
      store.append({ n });
      if (n % 7 === 0) store.flush();
    }
    store.close();
    expect(store.status().diskBytes).toBeLessThanOrEqual(200 + 100);
    expect(open(200).all().at(-1)).toEqual({ n: 99 });
    expect(readdirSync(dir)).toEqual(['rows.jsonl']);
  });
});
