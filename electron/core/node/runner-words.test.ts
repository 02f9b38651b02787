/**
 * The runner's words reach the client: its error chunk ends the request with its
 * message, also when the runner goes down right after; its RunnerFailed message is the
 * instance's reason. A scripted runner process plays the runner.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { localInstances } from '../../../shared/instance-state';
import { createNodeFixture, type NodeFixture } from '../../../test/support/node-fixture';

const FAKE_RUNNER = fileURLToPath(new URL('../../../test/support/fake-runner.mjs', import.meta.url));
const MODEL = 'sim/llama-3.2-1b';
const WORDS = 'prompt of 9000 tokens exceeds the context of 8192';

describe("the runner's words", () => {
  let fixture: NodeFixture;
  afterEach(async () => fixture?.cleanup());

  const start = async (mode: string) => {
    fixture = createNodeFixture(
      { restart: { baseDelayMs: 5000 } },
      { runnerCommand: () => ({ command: process.execPath, args: [FAKE_RUNNER, mode], env: {} }) },
    );
    await fixture.launch(MODEL);
    return fixture.node.submit({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], maxTokens: 4 }, () => undefined);
  };

  it('an error chunk ends its request with the runner’s message', async () => {
    const outcome = await (await start('error-on-generate')).done;
    expect(outcome).toMatchObject({ type: 'failed', error: { code: 'runner_failed', message: WORDS } });
    expect(localInstances(fixture.node.snapshot())[0]!.runner.state).toBe('ready');
  });

  it('an error chunk followed by the runner going down: the request keeps the runner’s message, the exit its RunnerFailed reason', async () => {
    const outcome = await (await start('error-then-exit')).done;
    expect(outcome).toMatchObject({ type: 'failed', error: { message: expect.stringContaining(WORDS) } });
    const runner = localInstances(fixture.node.snapshot())[0]!.runner;
    expect(runner.state).toBe('restarting');
    expect(runner.lastExit).toMatchObject({ cause: 'crashed', exitCode: 1, message: expect.stringContaining('Metal: out of memory') });
  });
});
