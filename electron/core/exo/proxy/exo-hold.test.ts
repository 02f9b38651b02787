/**
 * The hold's rules on the records alone: a request to a model that has a stream sent
 * or prefilling waits; the first token releases the next one; another model never
 * waits; a held request cancels at once; turning the setting off releases everything.
 */
import { describe, expect, it } from 'vitest';
import { ExoHold, HeldCancelled } from './exo-hold';
import { ExoTraffic, type ProxiedRequest } from './exo-traffic';

const A = 'mlx-community/Llama-3.2-3B-Instruct-4bit';
const B = 'mlx-community/Llama-3.2-1B-Instruct-4bit';

function setup() {
  const traffic = new ExoTraffic(() => null);
  const setting = { on: true };
  const hold = new ExoHold(traffic, () => setting.on);
  const send = async (model: string): Promise<{ record: ProxiedRequest; admitted: Promise<void> }> => {
    const record = traffic.begin(model, 'http://exo', true);
    const admitted = hold.admit(record).then(() => {
      if (record.sentAt == null) traffic.sent(record);
    });
    await Promise.resolve();
    return { record, admitted };
  };
  return { traffic, hold, setting, send };
}

const settled = async (p: Promise<unknown>) => {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((r) => setTimeout(r, 0));
  return done;
};

describe('the hold', () => {
  it('holds a second request to a prefilling model until its first token, and never another model', async () => {
    const { traffic, send } = setup();
    const first = await send(A);
    await first.admitted;
    traffic.progress(first.record, 0, 30_000);
    const second = await send(A);
    expect(second.record.phase).toBe('held');
    const other = await send(B);
    expect(await settled(other.admitted)).toBe(true);
    traffic.progress(first.record, 4096, 30_000);
    expect(await settled(second.admitted)).toBe(false);
    traffic.token(first.record, 'cmd-1');
    expect(await settled(second.admitted)).toBe(true);
    expect(second.record.phase).toBe('sent');
    expect(second.record.heldMs).toBeGreaterThanOrEqual(0);
  });

  it('cancels a held request at once and releases everything when the setting is turned off', async () => {
    const { traffic, hold, setting, send } = setup();
    const first = await send(A);
    await first.admitted;
    const second = await send(A);
    const third = await send(A);
    expect(hold.cancel(second.record, 'asked')).toBe(true);
    await expect(second.admitted).rejects.toBeInstanceOf(HeldCancelled);
    expect(traffic.find(second.record.id)).toMatchObject({ phase: 'cancelled', reason: 'asked' });
    const fourth = await send(A);
    setting.on = false;
    hold.settingChanged();
    expect(await settled(third.admitted)).toBe(true);
    expect(await settled(fourth.admitted)).toBe(true);
    expect(hold.heldCount(A)).toBe(0);
  });
});
