/**
 * The stream tap reads exo's transcript (test/fixtures/exo/chat-completions-stream.sse.txt)
 * however the bytes are split, and counts what it cannot read without failing.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FIXTURE_DIR } from '../../../../test/support/fake-exo';
import { SseTap, type SseTapEvents } from './sse-tap';

function record(): { events: string[]; tap: SseTap } {
  const events: string[] = [];
  const sink: SseTapEvents = {
    progress: (p, t) => events.push(`progress ${p}/${t}`),
    token: (id, content) => events.push(`token ${id} ${content}`),
    usage: (p, c) => events.push(`usage ${p} ${c}`),
    error: (m) => events.push(`error ${m}`),
    stats: (s) => events.push(`stats ${s.generation_tokens}`),
    done: () => events.push('done'),
  };
  return { events, tap: new SseTap(sink) };
}

const transcript = readFileSync(`${FIXTURE_DIR}chat-completions-stream.sse.txt`, 'utf8')
  .split('\n')
  .filter((l) => !l.startsWith('#'))
  .join('\n');
const [success, failure] = transcript
  .split(': keep-alive')
  .slice(1)
  .map((part) => `: keep-alive${part}`);

describe('SseTap', () => {
  it("reads exo's stream transcript, split at every byte", () => {
    const whole = record();
    whole.tap.feed(Buffer.from(success!));
    const bytewise = record();
    const bytes = Buffer.from(success!);
    for (let i = 0; i < bytes.length; i++) bytewise.tap.feed(bytes.subarray(i, i + 1));
    expect(bytewise.events).toEqual(whole.events);
    const id = 'c7e9a1b3-5d7f-4b2c-9e0a-3f5d7b9c1e24';
    expect(whole.events).toEqual([
      'progress 0/11873',
      'progress 4096/11873',
      'progress 8192/11873',
      'progress 11873/11873',
      `token ${id} true`,
      `token ${id} true`,
      `token ${id} true`,
      'usage 11873 412',
      'stats 412',
      'done',
    ]);
  });

  it("reads exo's error variant", () => {
    const { events, tap } = record();
    tap.feed(Buffer.from(failure!));
    expect(events).toEqual(['error Runner shutdown before completing command (signal=6 (Abort trap: 6))', 'done']);
  });

  it('counts unreadable lines and goes on', () => {
    const { events, tap } = record();
    tap.feed(Buffer.from(': prefill_progress {not json}\n\ndata: [1,2\n\ndata: {"id":"x","choices":[{"delta":{"content":"a"}}]}\r\n\r\n'));
    expect(tap.unreadable).toBe(2);
    expect(events).toEqual(['token x true']);
  });
});
