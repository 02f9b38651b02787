import { describe, expect, it } from 'vitest';
import { StopSequenceMatcher } from './stop-sequences';

/** Runs tokens through a matcher the way a runner does; returns the answer and whether it stopped. */
function run(stops: string[], tokens: string[]): { text: string; stopped: boolean; tokensUsed: number } {
  const matcher = new StopSequenceMatcher(stops);
  let text = '';
  for (let i = 0; i < tokens.length; i++) {
    const step = matcher.push(tokens[i]!);
    text += step.text;
    if (step.stopped) return { text, stopped: true, tokensUsed: i + 1 };
  }
  return { text: text + matcher.flush(), stopped: false, tokensUsed: tokens.length };
}

describe('stop sequences', () => {
  const tokens = ['the', ' model', ' runs', ' on', ' one', ' shared', ' GPU'];

  it('ends before a stop string inside one token', () => {
    expect(run([' runs'], tokens)).toEqual({ text: 'the model', stopped: true, tokensUsed: 3 });
  });

  it('ends before a stop string that spans tokens, holding back the partial match', () => {
    const matcher = new StopSequenceMatcher(['s on o']);
    expect(matcher.push('the').text).toBe('the');
    expect(matcher.push(' model').text).toBe(' model');
    // " runs" ends with "s", the start of the stop string: held back.
    expect(matcher.push(' runs')).toEqual({ text: ' run', stopped: false, matched: null });
    expect(matcher.push(' on')).toEqual({ text: '', stopped: false, matched: null });
    expect(matcher.push(' one')).toEqual({ text: '', stopped: true, matched: 's on o' });
  });

  it('releases held text that turns out not to be a stop string', () => {
    expect(run(['sX'], tokens)).toEqual({ text: tokens.join(''), stopped: false, tokensUsed: tokens.length });
    expect(run(['GPUs'], tokens)).toEqual({ text: tokens.join(''), stopped: false, tokensUsed: tokens.length });
  });

  it('takes the earliest of several stop strings, and names it', () => {
    expect(run([' GPU', ' on'], tokens).text).toBe('the model runs');
    const matcher = new StopSequenceMatcher([' GPU', ' on']);
    expect(matcher.push('the model runs on one shared GPU')).toMatchObject({ stopped: true, matched: ' on' });
  });

  it('a stop string at the very start gives an empty answer', () => {
    expect(run(['the'], tokens)).toEqual({ text: '', stopped: true, tokensUsed: 1 });
  });

  it('ignores empty stop strings and passes everything through without any', () => {
    expect(new StopSequenceMatcher(['']).isEmpty).toBe(true);
    expect(run([], tokens).text).toBe(tokens.join(''));
  });
});
