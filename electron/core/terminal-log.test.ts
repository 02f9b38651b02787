/**
 * The terminal log in both formats, through the real API server: one line per request
 * at the default level (method, path, status, duration, model), human-readable or JSON.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FakeNode } from '../../test/support/fake-node';
import { startServerRig, type ApiRig } from '../../test/support/api-harness';
import { createTerminalLogger, formatRecord, resolveLogFormat, resolveLogLevel, type LogFormat } from './terminal-log';

const MODEL = 'sim/llama-3.2-1b';
let rig: ApiRig | undefined;

afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/** A server logging at the default level in `format`; returns the lines written. */
async function serverLogging(format: LogFormat): Promise<string[]> {
  const lines: string[] = [];
  const out = { write: (text: string) => lines.push(...text.split('\n').filter((l) => l !== '')) };
  const node = new FakeNode();
  await node.createInstance({ model: MODEL, instanceType: 'ring', fastSynch: 'auto', acknowledgeRisk: false });
  rig = await startServerRig(node, { logger: createTerminalLogger({ format, level: resolveLogLevel({}), out }) });
  await rig.client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hello' }], max_tokens: 2 });
  await rig.control('GET', '/api/state');
  return lines;
}

describe('the terminal log', () => {
  it('pretty: one human line per request, with method, path, status, duration and model', async () => {
    const lines = await serverLogging('pretty');
    expect(lines.find((l) => l.includes('/v1/chat/completions'))).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} INFO {2}POST \/v1\/chat\/completions 200 \d+(\.\d)? ms sim\/llama-3\.2-1b$/,
    );
    expect(lines.find((l) => l.includes('/api/state'))).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}GET \/api\/state 200 \d+(\.\d)? ms$/);
    // Not one JSON line among them.
    expect(lines.filter((l) => l.startsWith('{'))).toEqual([]);
  });

  it('json: one JSON record per request, at info', async () => {
    const records = (await serverLogging('json')).map((l) => JSON.parse(l) as Record<string, unknown>);
    const chat = records.find((r) => r.path === '/v1/chat/completions');
    expect(chat).toMatchObject({ level: 30, msg: 'request', method: 'POST', status: 200, model: MODEL });
    expect(typeof chat?.ms).toBe('number');
  });

  it('formats other records with their fields and error message', () => {
    const line = formatRecord({
      level: 40,
      time: Date.UTC(2026, 0, 1, 12, 0, 1, 234),
      pid: 1,
      msg: 'looking for the MLX runtime failed',
      component: 'core',
      err: { message: 'no python' },
      code: 'x y',
    });
    expect(line).toBe('12:00:01.234 WARN  [core] looking for the MLX runtime failed code="x y" error="no python"');
  });
});

describe('choosing the format and level', () => {
  it('pretty in a terminal, JSON otherwise; the environment or the flag wins, the flag first', () => {
    expect(resolveLogFormat({ env: {}, isTTY: true })).toBe('pretty');
    expect(resolveLogFormat({ env: {}, isTTY: false })).toBe('json');
    expect(resolveLogFormat({ env: { EXOBAR_LOG_FORMAT: 'json' }, isTTY: true })).toBe('json');
    expect(resolveLogFormat({ env: { EXOBAR_LOG_FORMAT: 'pretty' }, isTTY: false })).toBe('pretty');
    expect(resolveLogFormat({ flag: 'json', env: { EXOBAR_LOG_FORMAT: 'pretty' }, isTTY: true })).toBe('json');
  });

  it('refuses an unknown format or level, saying what is allowed', () => {
    expect(() => resolveLogFormat({ env: { EXOBAR_LOG_FORMAT: 'xml' }, isTTY: true })).toThrow(/"pretty" or "json" \(got "xml"; from EXOBAR_LOG_FORMAT\)/);
    expect(() => resolveLogFormat({ flag: 'text', env: {}, isTTY: true })).toThrow(/from --log-format/);
    expect(resolveLogLevel({ EXOBAR_LOG_LEVEL: 'debug' })).toBe('debug');
    expect(() => resolveLogLevel({ EXOBAR_LOG_LEVEL: 'loud' })).toThrow(/one of fatal, error, warn, info, debug, trace, silent/);
  });
});
