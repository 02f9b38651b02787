/**
 * The body limit grows with the largest context served (agents send their whole context
 * every turn) up to a cap, and the 413 says the limit and where it comes from.
 */
import { describe, expect, it } from 'vitest';
import { useCoreRig } from '../../../test/support/api-harness';
import { bodyLimitForContext, DEFAULT_BODY_LIMIT_BYTES, MAX_BODY_LIMIT_BYTES } from './read-json-body';

const SMALL = 'sim/llama-3.2-1b';
const rig = useCoreRig([SMALL], { simTimeScale: 0.05 });

const countTokens = (bytes: number) =>
  fetch(`${rig().url}/v1/messages/count_tokens`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ model: SMALL, messages: [{ role: 'user', content: 'w '.repeat(Math.floor(bytes / 2)) }] }),
  });

describe('the body limit', () => {
  it('is 1 MiB plus 16 bytes per token of the largest context, capped', () => {
    expect(bodyLimitForContext(null).bytes).toBe(DEFAULT_BODY_LIMIT_BYTES);
    expect(bodyLimitForContext(131_072).bytes).toBe(DEFAULT_BODY_LIMIT_BYTES + 131_072 * 16);
    expect(bodyLimitForContext(10_000_000)).toMatchObject({ bytes: MAX_BODY_LIMIT_BYTES, why: expect.stringMatching(/capped at 64 MiB/) as unknown });
  });

  it('takes a 2 MiB body for a 128k-token model and refuses one past its limit with a 413 that says why', async () => {
    const ok = await countTokens(2 * 1024 * 1024);
    expect(ok.status).toBe(200);
    const tooBig = await countTokens(4 * 1024 * 1024);
    expect(tooBig.status).toBe(413);
    const body = (await tooBig.json()) as { error: { message: string } };
    expect(body.error.message).toMatch(/larger than 3145728 bytes .*largest context served \(131072 tokens\)/);
  });
});
