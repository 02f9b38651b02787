/**
 * The check's hold override: in force while set, nested runs undo in order, and the
 * operator's `exo.hold` (read at each use) is back once undone.
 */
import { describe, expect, it } from 'vitest';
import { createHoldOverride } from './hold-override';

describe('the hold override', () => {
  it("sets the hold for a run and gives the operator's setting back, read afresh", async () => {
    let operator = true;
    const hold = createHoldOverride(() => operator);
    const undoOff = await hold.apply(false);
    expect(hold.current()).toBe(false);
    const undoOn = await hold.apply(true);
    expect(hold.current()).toBe(true);
    await undoOn();
    expect(hold.current()).toBe(false);
    operator = false;
    await undoOff();
    expect(hold.current()).toBe(false);
    operator = true;
    expect(hold.current()).toBe(true);
  });
});
