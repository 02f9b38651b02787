/**
 * A refused change of a proxied request's state is counted on the traffic (the bundle's
 * exo/proxy-refused-transitions.json) and logged once, at warn, by exobar's own logger:
 * read back from the JSON lines that logger writes, not from a stand-in.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTerminalLogger } from '../../terminal-log';
import { ExoTraffic, type ProxiedRequest } from './exo-traffic';
import { openProxiedCall, REFUSED_PROXIED_TRANSITION, type ProxiedCall } from './proxied-call';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function rig() {
  const dir = mkdtempSync(join(tmpdir(), 'exobar-proxied-call-'));
  dirs.push(dir);
  const ownLog = join(dir, 'exobar.log');
  const terminal: string[] = [];
  const logger = createTerminalLogger({ format: 'json', level: 'info', out: { write: (line: string) => terminal.push(line) }, ownLog });
  const traffic = new ExoTraffic(() => null);
  const calls = new Map<ProxiedRequest, ProxiedCall>();
  const record = traffic.begin('mlx-community/Llama-3.2-1B-Instruct-4bit', 'http://127.0.0.1:52415', true);
  const call = openProxiedCall(calls, traffic, logger.child({ component: 'api' }), record, 'waiting');
  const records = () => terminal.map((line) => JSON.parse(line) as Record<string, unknown>).filter((r) => r.msg === REFUSED_PROXIED_TRANSITION);
  const fileRecords = () =>
    readFileSync(ownLog, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((r) => r.msg === REFUSED_PROXIED_TRANSITION);
  return { traffic, calls, record, call, records, fileRecords };
}

describe('a proxied request whose state machine refuses a change', () => {
  it('writes exactly one warn record per refusal, naming the request, its model, from, to and cause, and counts it for the bundle', async () => {
    const { traffic, calls, record, call, records, fileRecords } = rig();
    expect(calls.get(record)).toBe(call);

    // waiting → done is not in the table: refused, the state stays.
    expect(call.life.to('done', 'exo said done before it was sent')).toBe(false);
    expect(call.life.state).toBe('waiting');
    const first = {
      level: 40,
      component: 'api',
      requestId: record.id,
      model: record.model,
      from: 'waiting',
      to: 'done',
      cause: 'exo said done before it was sent',
    };
    expect(records()).toEqual([expect.objectContaining(first)]);

    // An accepted change writes no such record; a second refusal writes one more.
    expect(call.life.to('dispatched', 'sent to exo')).toBe(true);
    expect(call.life.to('held', 'held after it was sent')).toBe(false);
    const second = { level: 40, requestId: record.id, model: record.model, from: 'dispatched', to: 'held', cause: 'held after it was sent' };
    expect(records()).toEqual([expect.objectContaining(first), expect.objectContaining(second)]);

    // exobar's own log file (the page's log view, the bundle) has the same two records.
    await expect.poll(() => fileRecords().length, { timeout: 10_000 }).toBe(2);
    expect(fileRecords()).toEqual([expect.objectContaining(first), expect.objectContaining(second)]);

    expect(traffic.refusedTransitions).toBe(2);
    expect(traffic.refusals).toEqual([
      expect.objectContaining({ id: record.id, from: 'waiting', to: 'done', reason: 'exo said done before it was sent' }),
      expect.objectContaining({ id: record.id, from: 'dispatched', to: 'held', reason: 'held after it was sent' }),
    ]);
    // A refusal records no end: the request is still in flight.
    expect(traffic.active()).toEqual([record]);
  });
});
