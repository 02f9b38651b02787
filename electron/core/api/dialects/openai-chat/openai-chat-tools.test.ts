/**
 * Tools and structured output through OpenAI's chat completions, on the sim (which
 * scripts a call and schema-valid JSON): the official client reads them as OpenAI's.
 */
import { describe, expect, it } from 'vitest';
import { useCoreRig } from '../../../../../test/support/api-harness';

const SMALL = 'sim/llama-3.2-1b';
const rig = useCoreRig([SMALL], { simTimeScale: 0.05 });

const weather = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1 } }, required: ['city', 'days'] },
  },
};

describe('OpenAI chat completions: tools and structured output', () => {
  it('answers a required tool call as tool_calls, whole and streamed', async () => {
    const whole = await rig().client.chat.completions.create({ model: SMALL, messages: [{ role: 'user', content: 'weather?' }], tools: [weather], tool_choice: 'required' });
    const choice = whole.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.tool_calls).toHaveLength(1);
    const call = choice.message.tool_calls![0]!;
    expect(call.type === 'function' && call.function.name).toBe('get_weather');
    expect(JSON.parse(call.type === 'function' ? call.function.arguments : '')).toEqual({ city: 'sim city', days: 1 });

    const stream = await rig().client.chat.completions.create({ model: SMALL, messages: [{ role: 'user', content: 'weather?' }], tools: [weather], tool_choice: 'required', stream: true });
    const deltas: unknown[] = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      for (const c of chunk.choices) {
        if (c.delta.tool_calls) deltas.push(...c.delta.tool_calls);
        if (c.finish_reason) finish = c.finish_reason;
      }
    }
    expect(finish).toBe('tool_calls');
    expect(deltas).toMatchObject([{ index: 0, type: 'function', function: { name: 'get_weather' } }]);
  });

  it('answers text after the tool result (auto), passing the call and the result back', async () => {
    const answer = await rig().client.chat.completions.create({
      model: SMALL,
      max_tokens: 5,
      tools: [weather],
      messages: [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"x","days":1}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
      ],
    });
    expect(answer.choices[0]!.finish_reason).toBe('length');
    expect(answer.choices[0]!.message.content).toBeTruthy();
  });

  it('answers JSON valid against a json_schema response format', async () => {
    const schema = { type: 'object', properties: { name: { type: 'string' }, tags: { type: 'array', items: { enum: ['a', 'b'] } } }, required: ['name', 'tags'] };
    const answer = await rig().client.chat.completions.create({
      model: SMALL,
      messages: [{ role: 'user', content: 'json please' }],
      response_format: { type: 'json_schema', json_schema: { name: 'thing', schema, strict: true } },
    });
    expect(answer.choices[0]!.finish_reason).toBe('stop');
    expect(JSON.parse(answer.choices[0]!.message.content!)).toEqual({ name: 'sim', tags: ['a'] });
  });

  it('refuses a tool_choice naming a tool the request does not have', async () => {
    const error = await rig()
      .client.chat.completions.create({ model: SMALL, messages: [{ role: 'user', content: 'x' }], tools: [weather], tool_choice: { type: 'function', function: { name: 'nope' } } })
      .catch((e: unknown) => e as { status: number; param: string });
    expect(error).toMatchObject({ status: 400, param: 'tool_choice' });
  });
});
