import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fastSynchFromLog, readExoLogFastSynch } from './exo-log-fast-synch';

// Lines as exo's loguru setup writes them (the prefix does not matter to the reader).
const line = (text: string) => `[ 02:14:56.123PM | INFO    ] ${text}`;

describe("fast synch from exo's log", () => {
  it('reads the forced value at start', () => {
    expect(fastSynchFromLog([line('Starting EXO'), line('FAST_SYNCH forced OFF')].join('\n'))).toMatchObject({ enabled: false });
    expect(fastSynchFromLog([line('Starting EXO'), line('FAST_SYNCH forced ON')].join('\n'))).toMatchObject({ enabled: true });
  });

  it("lets the latest runner's flag win within a run", () => {
    const text = [line('Starting EXO'), line('FAST_SYNCH forced OFF'), line('Fast synch flag: 0'), line('Fast synch flag: 1')].join('\n');
    expect(fastSynchFromLog(text)).toEqual({ enabled: true, line: line('Fast synch flag: 1') });
  });

  it('ignores what an earlier start logged: the most recent start wins', () => {
    const text = [line('Starting EXO'), line('FAST_SYNCH forced OFF'), line('Fast synch flag: 0'), line('Starting EXO'), line('Node elected Master')].join(
      '\n',
    );
    expect(fastSynchFromLog(text)).toBeNull();
    expect(fastSynchFromLog(`${text}\n${line('Fast synch flag: 1')}`)).toMatchObject({ enabled: true });
  });

  const dir = mkdtempSync(join(tmpdir(), 'exo-log-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads the tail of the file at an injected path, and null with no file', async () => {
    const path = join(dir, 'exo.log');
    writeFileSync(path, `${'x'.repeat(10_000)}\n${line('Starting EXO')}\n${line('Fast synch flag: 0')}\n`);
    expect(await readExoLogFastSynch(path, 1_000)).toMatchObject({ enabled: false });
    expect(await readExoLogFastSynch(join(dir, 'missing.log'))).toBeNull();
  });
});
