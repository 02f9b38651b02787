import { describe, expect, it } from 'vitest';
import { findSimModel } from '../../../shared/catalog';
import { parseSimRunnerArgs } from './args';
import { SIM_PROFILES } from './sim-profiles';

describe('sim runner args', () => {
  it('accepts a catalog sim model and a time scale in both flag forms', () => {
    const a = parseSimRunnerArgs(['--model', 'sim/llama-3.2-1b', '--time-scale', '0.05']);
    expect(a.ok && a.value.model.id).toBe('sim/llama-3.2-1b');
    expect(a.ok && a.value.timeScale).toBe(0.05);
    const b = parseSimRunnerArgs(['--model=sim/llama-3.2-3b']);
    expect(b.ok && b.value.timeScale).toBe(1);
  });

  it('takes every runner\'s engine flags, with the protocol\'s defaults: interleaved, 250 ms chunks, no cache', () => {
    const a = parseSimRunnerArgs(['--model', 'sim/llama-3.2-1b', '--schedule', 'exo', '--prefill-chunk-ms=100', '--prompt-cache-bytes', '1048576']);
    expect(a.ok && [a.value.schedule, a.value.prefillChunkMs, a.value.promptCacheBytes]).toEqual(['exo', 100, 1048576]);
    const b = parseSimRunnerArgs(['--model', 'sim/llama-3.2-1b']);
    expect(b.ok && [b.value.schedule, b.value.prefillChunkMs, b.value.promptCacheBytes]).toEqual(['interleaved', 250, 0]);
  });

  it("takes a calibrated profile's timings in place of the model's, keeping its load figures", () => {
    const a = parseSimRunnerArgs(['--model', 'sim/llama-3.2-1b', '--profile', 'cpu-tiny']);
    const catalog = findSimModel('sim/llama-3.2-1b')!.sim!;
    expect(a.ok && a.value.model.sim).toEqual({ ...catalog, ...SIM_PROFILES['cpu-tiny'].timings });
    expect(a.ok && a.value.model.sim.loadS).toBe(catalog.loadS);
    // Named, for its hello (the card shows it); none without the flag.
    expect(a.ok && a.value.profile).toBe('cpu-tiny');
    const b = parseSimRunnerArgs(['--model', 'sim/llama-3.2-1b']);
    expect(b.ok && b.value.profile).toBeNull();
  });

  it.each([
    [['--model', 'sim/llama-3.2-1b', '--profile', 'gpu-huge'], '--profile must be one of cpu-tiny, got "gpu-huge"'],
    [[], '--model is required'],
    [['--model', 'sim/nope'], 'unknown sim model "sim/nope" (known: sim/llama-3.2-1b, sim/llama-3.2-3b)'],
    [['--model'], '--model needs a value'],
    [['--model', 'sim/llama-3.2-1b', '--time-scale', '0'], '--time-scale must be a number in (0, 1000], got "0"'],
    [['--model', 'sim/llama-3.2-1b', '--time-scale', 'fast'], '--time-scale must be a number in (0, 1000], got "fast"'],
    [['--model', 'sim/llama-3.2-1b', '--verbose'], 'unknown argument "--verbose"'],
    [['--model', 'sim/llama-3.2-1b', '--schedule', 'fifo'], '--schedule must be exo or interleaved, got "fifo"'],
    [['--model', 'sim/llama-3.2-1b', '--prefill-chunk-ms', '2.5'], '--prefill-chunk-ms must be an integer in [10, 10000], got "2.5"'],
    [['--model', 'sim/llama-3.2-1b', '--prompt-cache-bytes', '-1'], '--prompt-cache-bytes must be a whole number of bytes (0: no cache), got "-1"'],
  ])('rejects %j with a clear message', (argv, error) => {
    expect(parseSimRunnerArgs(argv)).toEqual({ ok: false, error });
  });
});
