/**
 * Fault-injection prompts (like exo's debug prompts): a TextGeneration whose messages
 * contain one of them makes the runner crash or hang, so the supervisor's crash handling
 * and watchdog can be tested against a real process.
 *
 * A load has no prompt, so its fault is the environment's: with EXOBAR_SIM_LOAD_HANGS_AFTER=N
 * the runner hangs (alive and silent, as the hang prompt) after N of its loading updates,
 * like an MLX load stuck on a disk or a memory-starved Mac. runner_load_stalled is tested with it.
 */
import { FAULT_PROMPTS, type ChatMessage } from '../../../shared/runner-protocol';

export type Fault = 'crash' | 'hang';

/** The fault a prompt asks for, if any message contains a fault prompt. */
export function detectFault(messages: readonly ChatMessage[]): Fault | null {
  for (const message of messages) {
    if (message.content.includes(FAULT_PROMPTS.crash)) return 'crash';
    if (message.content.includes(FAULT_PROMPTS.hang)) return 'hang';
  }
  return null;
}

/** Tokens a crashing request emits before the process exits (mid-generation). */
export const CRASH_AFTER_TOKENS = 3;

/** The environment variable of the load fault: how many loading updates before the runner hangs. */
export const LOAD_HANGS_AFTER_ENV = 'EXOBAR_SIM_LOAD_HANGS_AFTER';

/** The loading updates after which the load hangs, or null (no fault, or not a count). */
export function loadHangsAfter(env: NodeJS.ProcessEnv): number | null {
  const raw = env[LOAD_HANGS_AFTER_ENV];
  const n = raw === undefined || raw === '' ? NaN : Number(raw);
  return Number.isInteger(n) && n >= 0 ? n : null;
}
