/**
 * The hold the exo proxy reads (`holdEnabled`): the operator's setting `exo.hold`,
 * unless the sharing check has set one for a run. The check runs experiments 1 and 2
 * on exo with the hold on and then off; the override never touches the saved settings,
 * and its undo hands the decision back to the operator's setting.
 */
export interface HoldOverride {
  /** The hold in force now: the override while one is set, else the operator's. */
  current(): boolean;
  /** Sets the hold until the returned undo is called. */
  apply(on: boolean): Promise<() => Promise<void>>;
}

export function createHoldOverride(operator: () => boolean): HoldOverride {
  let override: boolean | null = null;
  return {
    current: () => override ?? operator(),
    apply(on) {
      // Nested runs undo in order: each gives back what was in force before it.
      const previous = override;
      override = on;
      return Promise.resolve(() => {
        override = previous;
        return Promise.resolve();
      });
    },
  };
}
