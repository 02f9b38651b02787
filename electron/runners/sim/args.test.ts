import { describe, expect, it } from 'vitest';
import { parseSimRunnerArgs } from './args';

describe('sim runner args', () => {
  it('accepts a catalog sim model and a time scale in both flag forms', () => {
    const a = parseSimRunnerArgs(['--model', 'sim/llama-3.2-1b', '--time-scale', '0.05']);
    expect(a.ok && a.value.model.id).toBe('sim/llama-3.2-1b');
    expect(a.ok && a.value.timeScale).toBe(0.05);
    const b = parseSimRunnerArgs(['--model=sim/llama-3.2-3b']);
    expect(b.ok && b.value.timeScale).toBe(1);
  });

  it.each([
    [[], '--model is required'],
    [['--model', 'sim/nope'], 'unknown sim model "sim/nope" (known: sim/llama-3.2-1b, sim/llama-3.2-3b)'],
    [['--model'], '--model needs a value'],
    [['--model', 'sim/llama-3.2-1b', '--time-scale', '0'], '--time-scale must be a number in (0, 1000], got "0"'],
    [['--model', 'sim/llama-3.2-1b', '--time-scale', 'fast'], '--time-scale must be a number in (0, 1000], got "fast"'],
    [['--model', 'sim/llama-3.2-1b', '--verbose'], 'unknown argument "--verbose"'],
  ])('rejects %j with a clear message', (argv, error) => {
    expect(parseSimRunnerArgs(argv)).toEqual({ ok: false, error });
  });
});
