import { describe, expect, it } from 'vitest';
import { defaultSettings, type Settings } from './api';
import { SIM_MODELS, type CatalogModel } from './catalog';
import { DEFAULT_HEADROOM_BYTES, pickSafePairModels, planSafePair, type SafePairPlanInput } from './safe-pair-plan';

const GiB = 1024 ** 3;
const SMALL = 'sim/llama-3.2-1b';
const MEDIUM = 'sim/llama-3.2-3b';

const mlx = (id: string, sizeClass: CatalogModel['sizeClass'], gib: number): CatalogModel => ({
  id,
  name: id,
  engine: 'mlx',
  simulated: false,
  memoryBytes: gib * GiB,
  sizeClass,
  path: `/models/${id}`,
});

function input(over: Partial<Omit<SafePairPlanInput, 'settings'>> & { settings?: Partial<Settings> } = {}): SafePairPlanInput {
  return {
    catalog: SIM_MODELS,
    running: [],
    freeMemoryBytes: 64 * GiB,
    ...over,
    settings: { ...defaultSettings(), ...over.settings },
  };
}

describe('planSafePair', () => {
  it('plans the catalog small and medium sim models as ring instances with fast synch off', () => {
    const plan = planSafePair(input());
    expect(plan.canRun).toBe(true);
    expect(plan.blockers).toEqual([]);
    expect(plan.models.map((m) => m.model)).toEqual([SMALL, MEDIUM]);
    for (const m of plan.models) {
      expect(m).toMatchObject({
        instanceType: 'ring',
        fastSynch: false,
        fastSynchReason: 'ring instance',
        alreadyRunning: false,
        engine: 'sim',
        simulated: true,
      });
    }
    const required = SIM_MODELS.reduce((s, m) => s + m.memoryBytes, 0);
    expect(plan.memory).toEqual({ requiredBytes: required, freeBytes: 64 * GiB, headroomBytes: DEFAULT_HEADROOM_BYTES });
  });

  it('respects a settings default that forces fast synch off (reason says so)', () => {
    const plan = planSafePair(input({ settings: { defaultFastSynch: 'off' } }));
    expect(plan.canRun).toBe(true);
    expect(plan.models.map((m) => m.fastSynchReason)).toEqual(['forced off by settings default', 'forced off by settings default']);
  });

  it('blocks when the settings default would put fast synch on for two ring instances', () => {
    const plan = planSafePair(input({ settings: { defaultFastSynch: 'on' } }));
    expect(plan.canRun).toBe(false);
    expect(plan.models.every((m) => m.fastSynch)).toBe(true);
    expect(plan.blockers).toHaveLength(1);
    expect(plan.blockers[0]).toMatch(/ring models share the GPU/);
    expect(plan.blockers[0]).toMatch(/reboot/);
    expect(plan.blockers[0]).toMatch(/set it to "auto"/);
  });

  it('blocks when another ring instance already runs with fast synch on', () => {
    const plan = planSafePair(input({ running: [{ id: 'x', model: 'other', instanceType: 'ring', fastSynch: true, fastSynchReason: 'forced on by user' }] }));
    expect(plan.canRun).toBe(false);
    expect(plan.blockers[0]).toMatch(/Fast synch is on for other/);
    expect(plan.blockers[0]).toMatch(/Relaunch/);
  });

  it('blocks beside a JACCL instance still running with fast synch on (two models on one GPU with it on), not beside one with it off', () => {
    const on = planSafePair(input({ running: [{ id: 'j', model: 'big', instanceType: 'jaccl', fastSynch: true }] }));
    expect(on.canRun).toBe(false);
    expect(on.blockers).toEqual([expect.stringMatching(/^Fast synch is on for big while 3 models \(ring and JACCL\) share the GPU\./)]);
    const off = planSafePair(input({ running: [{ id: 'j', model: 'big', instanceType: 'jaccl', fastSynch: false }] }));
    expect(off.canRun).toBe(true);
  });

  it('reuses a model already running as a ring instance and needs no memory for it', () => {
    const plan = planSafePair(input({ running: [{ id: 'i1', model: MEDIUM, instanceType: 'ring', fastSynch: false, fastSynchReason: 'ring instance' }] }));
    expect(plan.canRun).toBe(true);
    expect(plan.models.map((m) => [m.model, m.alreadyRunning])).toEqual([
      [SMALL, false],
      [MEDIUM, true],
    ]);
    expect(plan.models[1]?.fastSynchReason).toBe('ring instance');
    expect(plan.memory.requiredBytes).toBe(SIM_MODELS[0]?.memoryBytes);
  });

  it('says a reused instance that still loads is loading, not running, and shows the memory of the new one', () => {
    const plan = planSafePair(input({ running: [{ id: 'i1', model: MEDIUM, instanceType: 'ring', fastSynch: false, state: 'loading' }] }));
    expect(plan.models.map((m) => [m.model, m.alreadyRunning, m.state])).toEqual([
      [SMALL, false, null],
      [MEDIUM, true, 'loading'],
    ]);
    expect(plan.models[0]?.memoryBytes).toBe(SIM_MODELS[0]?.memoryBytes);
    expect(plan.memory.requiredBytes).toBe(plan.models[0]?.memoryBytes);
  });

  it('needs no memory at all when both already run', () => {
    const plan = planSafePair(
      input({
        freeMemoryBytes: 0,
        running: [
          { id: 'a', model: SMALL, instanceType: 'ring', fastSynch: false },
          { id: 'b', model: MEDIUM, instanceType: 'ring', fastSynch: false },
        ],
      }),
    );
    expect(plan.canRun).toBe(true);
    expect(plan.memory.requiredBytes).toBe(0);
    expect(plan.models.every((m) => m.alreadyRunning)).toBe(true);
    expect(plan.models[0]?.fastSynchReason).toBe('already running with fast synch off');
  });

  it('blocks a model running as a JACCL instance instead of starting a second copy', () => {
    const plan = planSafePair(input({ running: [{ id: 'j', model: SMALL, instanceType: 'jaccl', fastSynch: false }] }));
    expect(plan.canRun).toBe(false);
    expect(plan.blockers).toEqual([expect.stringMatching(/sim\/llama-3.2-1b is already running as a JACCL instance/)]);
  });

  it('blocks with the numbers when memory is short after headroom', () => {
    const plan = planSafePair(input({ freeMemoryBytes: 5 * GiB, headroomBytes: 2 * GiB }));
    expect(plan.canRun).toBe(false);
    // 1.4 + 3.4 GiB needed; 5 - 2 = 3 GiB available.
    expect(plan.blockers).toEqual(['Not enough memory: needs 4.8 GiB; 5.0 GiB free, of which 2.0 GiB is kept free for macOS and other apps: 3.0 GiB usable.']);
    expect(plan.memory).toMatchObject({ freeBytes: 5 * GiB, headroomBytes: 2 * GiB });
  });

  it('fits exactly at the limit and uses the default headroom', () => {
    const required = SIM_MODELS.reduce((s, m) => s + m.memoryBytes, 0);
    expect(planSafePair(input({ freeMemoryBytes: required + DEFAULT_HEADROOM_BYTES })).canRun).toBe(true);
    expect(planSafePair(input({ freeMemoryBytes: required + DEFAULT_HEADROOM_BYTES - 1 })).canRun).toBe(false);
  });

  it('never reports negative free memory after headroom', () => {
    const plan = planSafePair(input({ freeMemoryBytes: 1 * GiB }));
    expect(plan.blockers[0]).toBe('Not enough memory: needs 4.8 GiB; 1.0 GiB free, less than the 2.0 GiB kept free for macOS and other apps: nothing usable.');
  });

  it('blocks an unknown model set in settings, naming it and the slot', () => {
    const plan = planSafePair(input({ settings: { safePair: { small: 'nope/model', medium: MEDIUM } } }));
    expect(plan.canRun).toBe(false);
    expect(plan.blockers).toEqual(['Unknown model "nope/model" (safePair.small): it is not in the catalog.']);
    expect(plan.models.map((m) => m.model)).toEqual([MEDIUM]);
  });

  it('blocks the same model twice', () => {
    const plan = planSafePair(input({ settings: { safePair: { small: MEDIUM, medium: MEDIUM } } }));
    expect(plan.canRun).toBe(false);
    expect(plan.blockers[0]).toMatch(/two different models/);
    expect(plan.models).toHaveLength(1);
  });

  it('collects every blocker at once', () => {
    const plan = planSafePair(input({ freeMemoryBytes: 0, settings: { defaultFastSynch: 'on', safePair: { small: 'x/unknown', medium: MEDIUM } } }));
    // Only the medium model can be placed: no two-ring risk, but unknown + memory.
    expect(plan.blockers).toHaveLength(2);
    expect(plan.blockers[0]).toMatch(/Unknown model/);
    expect(plan.blockers[1]).toMatch(/Not enough memory/);
  });
});

describe('pickSafePairModels', () => {
  const catalog = [...SIM_MODELS, mlx('mlx/qwen-0.5b', 'small', 1), mlx('mlx/qwen-7b', 'medium', 6), mlx('mlx/big', 'large', 40)];

  it('prefers real MLX models of each class while settings hold their built-in default', () => {
    expect(pickSafePairModels(catalog, defaultSettings())).toEqual({ small: 'mlx/qwen-0.5b', medium: 'mlx/qwen-7b' });
    const plan = planSafePair(input({ catalog }));
    expect(plan.models.map((m) => [m.model, m.engine, m.simulated])).toEqual([
      ['mlx/qwen-0.5b', 'mlx', false],
      ['mlx/qwen-7b', 'mlx', false],
    ]);
  });

  it('falls back to sim in a class without an MLX model', () => {
    const onlySmall = [...SIM_MODELS, mlx('mlx/qwen-0.5b', 'small', 1)];
    expect(pickSafePairModels(onlySmall, defaultSettings())).toEqual({ small: 'mlx/qwen-0.5b', medium: MEDIUM });
  });

  it('uses models configured in settings as they are', () => {
    const settings = { ...defaultSettings(), safePair: { small: SMALL, medium: 'mlx/qwen-7b' } };
    expect(pickSafePairModels(catalog, settings)).toEqual({ small: 'mlx/qwen-0.5b', medium: 'mlx/qwen-7b' });
    const custom = { ...defaultSettings(), safePair: { small: 'mlx/big', medium: MEDIUM } };
    expect(pickSafePairModels(catalog, custom)).toEqual({ small: 'mlx/big', medium: 'mlx/qwen-7b' });
  });

  it('takes the catalog model of the class when the built-in default id is absent', () => {
    const other: CatalogModel[] = [
      { ...mlx('sim/tiny', 'small', 1), engine: 'sim', simulated: true },
      { ...mlx('sim/mid', 'medium', 2), engine: 'sim', simulated: true },
    ];
    expect(pickSafePairModels(other, defaultSettings())).toEqual({ small: 'sim/tiny', medium: 'sim/mid' });
  });
});
