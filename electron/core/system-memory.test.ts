import { describe, expect, it } from 'vitest';
import { parseMeminfo, parseVmStat, readSystemMemory } from './system-memory';

/** `vm_stat` on an Apple-silicon Mac (16 KiB pages). */
const VM_STAT = `Mach Virtual Memory Statistics: (page size of 16384 bytes)
Pages free:                                3436.
Pages active:                            389656.
Pages inactive:                          380560.
Pages speculative:                         5468.
Pages throttled:                              0.
Pages wired down:                        206455.
Pages purgeable:                          18367.
"Translation faults":                 3180432361.
Pages copy-on-write:                   97658633.
Pages zero filled:                   1440989624.
Pages reactivated:                     45232428.
Pages purged:                          15254009.
File-backed pages:                       280839.
Anonymous pages:                         494845.
Pages stored in compressor:              818456.
Pages occupied by compressor:            202188.
Decompressions:                        53880214.
Compressions:                          74440690.
Pageins:                               27054086.
Pageouts:                                300151.
Swapins:                                1204555.
Swapouts:                               1640549.
`;

/** /proc/meminfo excerpt. */
const MEMINFO = `MemTotal:       16303472 kB
MemFree:          512340 kB
MemAvailable:    9876544 kB
Buffers:          123456 kB
Cached:          8000000 kB
SwapCached:            0 kB
`;

const GiB = 1024 ** 3;

describe('parseVmStat', () => {
  it('adds free, inactive and speculative pages times the page size', () => {
    expect(parseVmStat(VM_STAT)).toEqual({ pageSize: 16384, freeBytes: (3436 + 380560 + 5468) * 16384 });
  });

  it('does not count "Pages purgeable" or "wired down" lines as free', () => {
    const r = parseVmStat(VM_STAT);
    expect(r?.freeBytes).toBeLessThan(6 * GiB + 1);
  });

  it('reads the 4 KiB page size of Intel Macs', () => {
    const text = 'Mach Virtual Memory Statistics: (page size of 4096 bytes)\nPages free: 100.\nPages inactive: 50.\n';
    expect(parseVmStat(text)).toEqual({ pageSize: 4096, freeBytes: 150 * 4096 });
  });

  it('returns null without the header or the free line', () => {
    expect(parseVmStat('Pages free: 100.\n')).toBeNull();
    expect(parseVmStat('Mach Virtual Memory Statistics: (page size of 16384 bytes)\nPages active: 1.\n')).toBeNull();
    expect(parseVmStat('')).toBeNull();
  });
});

describe('parseMeminfo', () => {
  it('reads MemAvailable and MemTotal in bytes', () => {
    expect(parseMeminfo(MEMINFO)).toEqual({ totalBytes: 16303472 * 1024, availableBytes: 9876544 * 1024 });
  });

  it('returns null without MemAvailable (old kernels)', () => {
    expect(parseMeminfo('MemTotal: 1000 kB\nMemFree: 10 kB\n')).toBeNull();
  });
});

describe('readSystemMemory', () => {
  const base = { totalmem: () => 64 * GiB, freemem: () => 1 * GiB };
  const fail = () => Promise.reject(new Error('must not be called'));

  it('uses vm_stat on macOS', async () => {
    const r = await readSystemMemory({ ...base, platform: 'darwin', runVmStat: async () => VM_STAT, readMeminfo: fail });
    expect(r).toEqual({ totalBytes: 64 * GiB, freeBytes: (3436 + 380560 + 5468) * 16384, source: 'vm_stat' });
  });

  it('falls back to os.freemem() when vm_stat fails or prints nonsense', async () => {
    const failed = await readSystemMemory({ ...base, platform: 'darwin', runVmStat: () => Promise.reject(new Error('ENOENT')) });
    expect(failed).toEqual({ totalBytes: 64 * GiB, freeBytes: 1 * GiB, source: 'os.freemem' });
    const garbage = await readSystemMemory({ ...base, platform: 'darwin', runVmStat: async () => 'hello' });
    expect(garbage.source).toBe('os.freemem');
  });

  it('uses MemAvailable on Linux, and os.freemem() when it is missing', async () => {
    const r = await readSystemMemory({ ...base, platform: 'linux', readMeminfo: async () => MEMINFO, runVmStat: fail });
    expect(r).toMatchObject({ freeBytes: 9876544 * 1024, source: 'meminfo' });
    const old = await readSystemMemory({ ...base, platform: 'linux', readMeminfo: async () => 'MemFree: 1 kB\n' });
    expect(old.source).toBe('os.freemem');
  });

  it('uses os.freemem() elsewhere', async () => {
    const r = await readSystemMemory({ ...base, platform: 'win32', runVmStat: fail, readMeminfo: fail });
    expect(r).toEqual({ totalBytes: 64 * GiB, freeBytes: 1 * GiB, source: 'os.freemem' });
  });

  it('never reports more free than total', async () => {
    const r = await readSystemMemory({ ...base, totalmem: () => 1 * GiB, platform: 'darwin', runVmStat: async () => VM_STAT });
    expect(r.freeBytes).toBe(1 * GiB);
  });

  it('reads this machine without throwing', async () => {
    const r = await readSystemMemory();
    expect(r.totalBytes).toBeGreaterThan(0);
    expect(r.freeBytes).toBeGreaterThan(0);
    expect(r.freeBytes).toBeLessThanOrEqual(r.totalBytes);
  });
});
