import { describe, expect, it } from 'vitest';
import { parseKeepAlive } from './keep-alive';
import { planRoom, type ResidentInfo } from './room-plan';

const GiB = 1024 ** 3;
const resident = (id: string, lastUsedAt: number, over: Partial<ResidentInfo> = {}): ResidentInfo => ({
  id,
  model: `m/${id}`,
  memoryBytes: 2 * GiB,
  pinned: false,
  busy: false,
  lastUsedAt,
  ...over,
});
const model = { id: 'm/new', memoryBytes: 3 * GiB };

describe('making room for a load on request', () => {
  it('evicts nothing when the model fits under every cap', () => {
    expect(planRoom({ model, residents: [resident('a', 1)], maxModels: 2, maxBytes: null, availableBytes: 10 * GiB })).toEqual({ ok: true, evict: [] });
  });

  it('evicts the least recently used idle unpinned instances first, only as many as needed', () => {
    const residents = [resident('new', 30), resident('old', 10), resident('mid', 20)];
    const byCount = planRoom({ model, residents, maxModels: 3, maxBytes: null, availableBytes: null });
    expect(byCount.ok && byCount.evict.map((r) => r.id)).toEqual(['old']);
    // Bytes: 6 GiB resident + 3 GiB under a 6 GiB cap: two of them go.
    const byBytes = planRoom({ model, residents, maxModels: null, maxBytes: 6 * GiB, availableBytes: null });
    expect(byBytes.ok && byBytes.evict.map((r) => r.id)).toEqual(['old', 'mid']);
    // Memory: 1 GiB free, each unload gives back its 2 GiB estimate.
    const byMemory = planRoom({ model, residents, maxModels: null, maxBytes: null, availableBytes: 1 * GiB });
    expect(byMemory.ok && byMemory.evict.map((r) => r.id)).toEqual(['old']);
  });

  it('never evicts a pinned or busy instance, and says what holds the room', () => {
    const residents = [resident('p', 1, { pinned: true }), resident('b', 2, { busy: true })];
    const plan = planRoom({ model, residents, maxModels: 2, maxBytes: null, availableBytes: 0.5 * GiB });
    expect(plan).toEqual({
      ok: false,
      reason:
        'm/new cannot load: at most 2 models may be resident (onDemand.maxModels); not enough memory: it needs 3.0 GiB, 0.5 GiB would be free; ' +
        'nothing else can unload (m/p (p) is pinned, m/b (b) is busy)',
    });
  });
});

describe("a request's keep_alive", () => {
  it('takes seconds, Ollama durations and negative for never', () => {
    expect(parseKeepAlive(300)).toBe(300);
    expect(parseKeepAlive('300')).toBe(300);
    expect(parseKeepAlive('5m')).toBe(300);
    expect(parseKeepAlive('1h30m')).toBe(5400);
    expect(parseKeepAlive(0)).toBe(0);
    expect(parseKeepAlive(-1)).toBeNull();
    expect(parseKeepAlive('-1m')).toBeNull();
    expect(() => parseKeepAlive('soon')).toThrow(/not a duration/);
  });
});
