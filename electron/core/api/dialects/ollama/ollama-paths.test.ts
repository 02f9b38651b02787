/**
 * Ollama's paths share /api with exobar's control API: they are served without the
 * token, and none of them may shadow (or be shadowed by) a control route.
 */
import { describe, expect, it } from 'vitest';
import { useCoreRig } from '../../../../../test/support/api-harness';
import { controlRoutes } from '../../control-routes';
import { RouteTable } from '../../route-types';
import { ollamaRoutes } from './ollama-routes';

const SMALL = 'sim/llama-3.2-1b';
const JSON_TYPE = { 'Content-Type': 'application/json' };
const rig = useCoreRig([SMALL], { simTimeScale: 0.05 });

describe("Ollama's paths beside the control API", () => {
  it('no Ollama path is also a control path', () => {
    const control = new RouteTable(controlRoutes());
    for (const route of ollamaRoutes()) {
      const match = control.match(route.method, route.path);
      expect('route' in match ? route.path : null, route.path).toBeNull();
      expect('allowed' in match && match.allowed, route.path).toEqual([]);
    }
  });

  it('serves Ollama without the token, while the control API still wants it', async () => {
    const tags = await fetch(`${rig().url}/api/tags`);
    expect(tags.status).toBe(200);
    expect(((await tags.json()) as { models: { name: string }[] }).models.map((m) => m.name)).toContain(SMALL);
    expect((await fetch(`${rig().url}/api/version`)).status).toBe(200);
    expect((await fetch(`${rig().url}/api/state`)).status).toBe(401);
  });

  it("answers Ollama's errors in Ollama's shape, and a whole chat with Ollama's figures", async () => {
    const missing = await fetch(`${rig().url}/api/chat`, { method: 'POST', headers: JSON_TYPE, body: JSON.stringify({ model: 'nope', messages: [{ role: 'user', content: 'x' }] }) });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: expect.stringContaining("'nope'") as unknown });
    const whole = await fetch(`${rig().url}/api/chat`, {
      method: 'POST',
      headers: JSON_TYPE,
      body: JSON.stringify({ model: SMALL, stream: false, messages: [{ role: 'user', content: 'hi' }], options: { num_predict: 3 } }),
    });
    expect(await whole.json()).toMatchObject({ model: SMALL, done: true, done_reason: 'length', eval_count: 3, message: { role: 'assistant' } });
  });
});
