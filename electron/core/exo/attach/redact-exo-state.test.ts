import { describe, expect, it } from 'vitest';
import { readFixture, STATE_FIXTURES, type Json, snakeCaseKeys } from '../../../../test/support/fake-exo';
import { REDACTED_TEXT, redactExoState } from './redact-exo-state';

const PROMPTS = ['incident report', 'haiku', 'German', 'VPN drops', 'delayed shipment', 'capital of Australia'];

describe("redacting exo's state for the bundle", () => {
  it.each(STATE_FIXTURES)('leaves no prompt text of %s, in either casing, and keeps the settings', (name) => {
    for (const state of [readFixture(name), snakeCaseKeys(readFixture(name)) as Json]) {
      const { state: redacted, fields } = redactExoState(state);
      const text = JSON.stringify(redacted);
      for (const prompt of PROMPTS) expect(text).not.toContain(prompt);
      expect(fields).toBeGreaterThan(0);
      const tasks = Object.values((redacted as Json).tasks as Json).flatMap((t) => Object.values(t as Json)) as Json[];
      const generation = tasks.find((t) => t.taskParams ?? t.task_params) as Json;
      const params = (generation.taskParams ?? generation.task_params) as Json;
      expect(params).toMatchObject({ input: REDACTED_TEXT, chat_template_messages: REDACTED_TEXT, stream: true });
      expect(typeof params.max_output_tokens).toBe('number');
    }
  });

  it('replaces a field exo may add later, and text where an object was expected', () => {
    const { state } = redactExoState({
      tasks: { a: { TextGeneration: { taskParams: { model: 'm', system_prompt: 'secret plan' } } }, b: { TextGeneration: { taskParams: 'raw text' } } },
    });
    expect(JSON.stringify(state)).not.toContain('secret plan');
    expect(JSON.stringify(state)).not.toContain('raw text');
    expect(JSON.stringify(state)).toContain('"model":"m"');
  });
});
