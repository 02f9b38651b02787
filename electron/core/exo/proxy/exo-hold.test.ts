/**
 * The hold's rules on the records alone: a request to a model that has a stream sent
 * or prefilling waits; the first token releases the next one; another model never
 * waits; a held request cancels at once; turning the setting off releases everything.
 */
import { describe, expect, it } from 'vitest';
import { ExoHold, HeldCancelled } from './exo-hold';
import { ExoTraffic, type ProxiedRequest } from './exo-traffic';
import { openProxiedCall, type ProxiedCall } from './proxied-call';
import { sleep } from '../../../../test/support/eventually';

const A = 'mlx-community/Llama-3.2-3B-Instruct-4bit';
const B = 'mlx-community/Llama-3.2-1B-Instruct-4bit';

function setup() {
  // A clock the test moves, so the hold's length is a figure to check, not just a sign.
  const clock = { now: 1_000 };
  const traffic = new ExoTraffic(
    () => null,
    () => clock.now,
  );
  const setting = { on: true };
  const hold = new ExoHold(traffic, () => setting.on);
  const calls = new Map<ProxiedRequest, ProxiedCall>();
  // As the relay does: each request has its life, the hold moves it, one not held is sent at once.
  const send = async (model: string): Promise<{ record: ProxiedRequest; admitted: Promise<void> }> => {
    const record = traffic.begin(model, 'http://exo', true);
    const { life } = openProxiedCall(calls, traffic, { warn: () => undefined }, record, 'waiting');
    const admitted = hold.admit(record, life).then(() => {
      if (life.state !== 'dispatched') {
        traffic.sent(record);
        life.to('dispatched', 'sent to exo');
      }
    });
    await Promise.resolve();
    return { record, admitted };
  };
  return { traffic, hold, setting, send, clock };
}

const settled = async (p: Promise<unknown>) => {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  await sleep(0);
  return done;
};

describe('the hold', () => {
  it('holds a second request to a prefilling model until its first token, and never another model', async () => {
    const { traffic, send, clock } = setup();
    const first = await send(A);
    await first.admitted;
    traffic.progress(first.record, 0, 30_000);
    clock.now += 500;
    const second = await send(A);
    expect(second.record.phase).toBe('held');
    const other = await send(B);
    expect(await settled(other.admitted)).toBe(true);
    expect(other.record).toMatchObject({ phase: 'sent', heldMs: 0, sentAt: 1_500 });
    clock.now += 2_000;
    traffic.progress(first.record, 4096, 30_000);
    expect(await settled(second.admitted)).toBe(false);
    expect(second.record).toMatchObject({ phase: 'held', sentAt: null });
    clock.now += 1_000;
    traffic.token(first.record, 'cmd-1');
    expect(await settled(second.admitted)).toBe(true);
    // Sent at the first request's first token, having waited from its arrival until then.
    expect(first.record.firstTokenAt).toBe(4_500);
    expect(second.record).toMatchObject({ phase: 'sent', arrivedAt: 1_500, sentAt: 4_500, heldMs: 3_000 });
  });

  it('cancels a held request at once and releases everything when the setting is turned off', async () => {
    const { traffic, hold, setting, send } = setup();
    const first = await send(A);
    await first.admitted;
    const second = await send(A);
    const third = await send(A);
    expect(hold.cancel(second.record, 'cancel_api', 'asked')).toBe(true);
    await expect(second.admitted).rejects.toBeInstanceOf(HeldCancelled);
    expect(traffic.find(second.record.id)).toMatchObject({ phase: 'cancelled', reason: 'asked', cancelledBy: 'cancel_api' });
    const fourth = await send(A);
    setting.on = false;
    hold.settingChanged();
    expect(await settled(third.admitted)).toBe(true);
    expect(await settled(fourth.admitted)).toBe(true);
    expect(hold.heldCount(A)).toBe(0);
  });
});
