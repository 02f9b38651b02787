/**
 * The one way a test waits for something to happen: poll until it holds, with a
 * generous deadline that says what was awaited when it passes. Never a fixed sleep to
 * let something happen (load on 2 cores stretches any window); `sleep` is for pacing a
 * scripted fake, not for waiting.
 */
import { performance } from 'node:perf_hooks';

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Polls `probe` every 10 ms until it returns a truthy value, and returns that value;
 * throws "timed out waiting for <what>" after `timeoutMs`.
 */
export async function eventually<T>(probe: () => T | Promise<T>, timeoutMs = 10_000, what = 'condition'): Promise<NonNullable<T>> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}
