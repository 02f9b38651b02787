/**
 * The task ledger's held→sent rule on its own: a cancel before the runner's ack is held
 * and goes out at the ack; after the ack it goes out at once; a second cancel changes
 * nothing; the task's end (or the runner going down) takes it and its cancel away.
 */
import { describe, expect, it } from 'vitest';
import type { Task } from '../../../shared/runner-protocol';
import { TaskLedger } from './task-ledger';

const task = (taskId: string) =>
  ({ kind: 'TextGeneration', taskId, commandId: `cmd-${taskId}`, params: { messages: [], maxTokens: 8 } }) as unknown as Extract<Task, { kind: 'TextGeneration' }>;

describe('the task ledger', () => {
  it('holds a cancel until the ack, sends one after the ack at once, and forgets both at the end', () => {
    const clock = { now: 100 };
    const ledger = new TaskLedger(() => clock.now);
    ledger.add(task('a'), 10);
    ledger.add(task('b'), 10);
    expect(ledger.cancel('nope')).toBe('unknown');

    expect(ledger.cancel('a')).toBe('held');
    expect(ledger.pendingCancels.get('a')).toEqual({ taskId: 'a', state: 'held', since: 100 });
    expect(ledger.cancel('a')).toBe('pending');
    clock.now = 250;
    // The ack says the held cancel goes out now; the supervisor sends it and says so.
    expect(ledger.acknowledged('a')).toEqual({ sendHeldCancel: true });
    ledger.cancelSent('a');
    expect(ledger.pendingCancels.get('a')).toEqual({ taskId: 'a', state: 'sent', since: 250 });
    expect(ledger.acknowledged('a')).toBeNull();

    expect(ledger.acknowledged('b')).toEqual({ sendHeldCancel: false });
    expect(ledger.cancel('b')).toBe('send');
    expect(ledger.byCommandId('cmd-b')?.task.taskId).toBe('b');

    expect(ledger.ended('a')).toBe(true);
    expect(ledger.ended('a')).toBe(false);
    expect([...ledger.pendingCancels.keys()]).toEqual([]);
    expect(ledger.clear()).toEqual(['b']);
    expect(ledger.inProgress.size).toBe(0);
  });
});
