/**
 * Fault-injection prompts (like exo's debug prompts): a TextGeneration whose messages
 * contain one of them makes the runner crash or hang, so the supervisor's crash handling
 * and watchdog can be tested against a real process.
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
