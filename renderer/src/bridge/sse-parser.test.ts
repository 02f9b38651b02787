import { describe, expect, it } from 'vitest';
import { SseParser } from './sse-parser';

describe('SseParser', () => {
  it('parses events split across arbitrary chunks, with comments and multi-line data', () => {
    const p = new SseParser();
    const stream = ': keep-alive\n\nevent: snapshot\nid: 4\ndata: {"a":\ndata: 1}\n\ndata: plain\r\n\r\n';
    const events = [];
    for (let i = 0; i < stream.length; i += 3) events.push(...p.push(stream.slice(i, i + 3)));
    expect(events).toEqual([
      { event: 'snapshot', data: '{"a":\n1}', id: '4' },
      { event: 'message', data: 'plain', id: '4' },
    ]);
  });

  it('waits for the \\n after a trailing \\r', () => {
    const p = new SseParser();
    expect(p.push('data: x\r')).toEqual([]);
    expect(p.push('\n\r\n')).toEqual([{ event: 'message', data: 'x', id: null }]);
  });

  it('ignores an event with no data', () => {
    const p = new SseParser();
    expect(p.push('event: ping\n\n')).toEqual([]);
    expect(p.push('data:y\n\n')).toEqual([{ event: 'message', data: 'y', id: null }]);
  });
});
