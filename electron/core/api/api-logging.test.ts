/**
 * The API's log never holds a token, a query string or a request body, at any level:
 * the browser page's token and users' prompts must not end up in a log file.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FakeNode } from '../../../test/support/fake-node';
import { startServerRig, TEST_TOKEN, type ApiRig } from '../../../test/support/api-harness';

const lines: string[] = [];
let rig: ApiRig;

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(chunk.toString('utf8'));
      callback();
    },
  });
  const node = new FakeNode();
  await node.createInstance({ model: 'sim/llama-3.2-1b', instanceType: 'ring', fastSynch: 'auto', acknowledgeRisk: false });
  rig = await startServerRig(node, { logger: pino({ level: 'trace' }, sink) });
});

afterAll(async () => {
  await rig?.close();
});

it('logs requests by method, path and status only', async () => {
  const secretPrompt = 'my secret prompt 7b1e';
  await rig.client.chat.completions.create({ model: 'sim/llama-3.2-1b', messages: [{ role: 'user', content: secretPrompt }], max_tokens: 2 });
  await fetch(`${rig.url}/v1/chat/completions`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: `{"broken": "${secretPrompt}` });
  await rig.control('GET', '/api/state');
  await rig.control('GET', `/api/state?token=${TEST_TOKEN}`, undefined, { Authorization: `Bearer wrong-${TEST_TOKEN}` });
  await rig.control('POST', '/api/instances', { model: secretPrompt, extra: secretPrompt });
  const log = lines.join('');
  expect(log).toMatch(/"path":"\/api\/state"/);
  expect(log).toMatch(/"status":401/);
  expect(log).not.toContain(TEST_TOKEN);
  expect(log).not.toContain(secretPrompt);
  expect(log).not.toContain('token=');
});
