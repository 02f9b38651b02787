/**
 * Generated text stays off the disk: a runner's stdout.log keeps every line but the
 * text of its tokens, unless the debug setting asks for it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makePrompt } from '../../../shared/token-count';
import { createNodeFixture, submitTracked, type NodeFixture } from '../../../test/support/node-fixture';
import { eventually } from '../../../test/support/eventually';

const MODEL = 'sim/llama-3.2-1b';

describe('runner stdout log', () => {
  let fixture: NodeFixture;
  afterEach(async () => fixture?.cleanup());

  for (const logGeneratedText of [false, true]) {
    it(`${logGeneratedText ? 'keeps' : 'does not keep'} the generated text${logGeneratedText ? ' when the debug setting says so' : ''}`, async () => {
      fixture = createNodeFixture({ simTimeScale: 0.1, logGeneratedText });
      const id = await fixture.launch(MODEL);
      const request = submitTracked(fixture.node, { model: MODEL, messages: makePrompt(20, 'privacy'), maxTokens: 30 });
      expect((await request.handle.done).type).toBe('finished');
      const texts = request.events.flatMap((e) => (e.type === 'token' && e.text.length > 0 ? [e.text] : []));
      expect(texts.length).toBeGreaterThan(10);
      const file = join(fixture.dataDir, 'logs', id, 'stdout.log');
      const log = () => readFileSync(file, 'utf8');
      await eventually(() => log().includes('"status":"Complete"') && log().split('TokenChunk').length > 30, 5000, 'the log written');
      const logged = [...log().matchAll(/"text":("(?:[^"\\]|\\.)*")/g)].map((m) => JSON.parse(m[1]!) as string);
      if (logGeneratedText) expect(logged.filter((t) => t.length > 0)).toEqual(texts);
      else
        expect(
          logged.every((t) => /^\[\d+ characters\]$/.test(t)),
          logged.slice(0, 5).join(' | '),
        ).toBe(true);
    });
  }

  it('does not keep the stop sequence a token met (the client\'s words), only its length', async () => {
    fixture = createNodeFixture({ simTimeScale: 0.1 });
    const id = await fixture.launch(MODEL);
    // The sim writes words separated by spaces: the stop sequence " " is met.
    const request = submitTracked(fixture.node, { model: MODEL, messages: makePrompt(20, 'privacy-stop'), maxTokens: 30, stop: [' '] });
    expect(await request.handle.done).toMatchObject({ type: 'finished', finishReason: 'stop', stopSequence: ' ' });
    const file = join(fixture.dataDir, 'logs', id, 'stdout.log');
    // Wait for the line itself: the log is appended as the runner writes, and a task's
    // "Complete" (the launch's own) can be in it before the request's last chunk is.
    await eventually(() => readFileSync(file, 'utf8').includes('"stopSequence"'), 30_000, 'the last chunk logged');
    const logged = [...readFileSync(file, 'utf8').matchAll(/"stopSequence":("(?:[^"\\]|\\.)*")/g)].map((m) => JSON.parse(m[1]!) as string);
    expect(logged).toEqual(['[1 characters]']);
  });
});
