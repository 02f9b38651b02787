/**
 * Deterministic prompt-token counting for simulated models.
 *
 * The sim has no tokenizer; it counts one token per whitespace-separated word plus a
 * fixed chat-template overhead per message, so a test or benchmark can build a prompt
 * of an exact size with {@link makePrompt}.
 */
import type { ChatMessage } from './runner-protocol';

/** Template tokens per message (role header and end-of-turn), plus the generation prompt. */
export const TEMPLATE_TOKENS_PER_MESSAGE = 4;
export const GENERATION_PROMPT_TOKENS = 3;

export function countWords(text: string): number {
  const matches = text.match(/\S+/g);
  return matches ? matches.length : 0;
}

/** Prompt tokens of a chat for the sim engine. */
export function countPromptTokens(messages: readonly ChatMessage[]): number {
  let total = GENERATION_PROMPT_TOKENS;
  for (const message of messages) total += TEMPLATE_TOKENS_PER_MESSAGE + countWords(message.content);
  return total;
}

/**
 * The prompt's tokens as the sim sees them, {@link countPromptTokens} of them: per message
 * a header of three (start, role, separator), its words, an end token; then the generation
 * prompt, the assistant's header. As in a real chat template, the generation prompt is how
 * the next turn's assistant message starts, so a chat's next turn has the whole previous
 * prompt as its prefix (what the sim's prompt cache matches on).
 */
export function promptTokens(messages: readonly ChatMessage[]): string[] {
  const header = (role: string) => ['<|start|>', role, '<|sep|>'];
  const tokens: string[] = [];
  for (const message of messages) tokens.push(...header(message.role), ...(message.content.match(/\S+/g) ?? []), '<|end|>');
  tokens.push(...header('assistant'));
  return tokens;
}

/**
 * A single user message whose chat counts exactly `tokens` prompt tokens. `salt` makes
 * it unique, as the benchmark's long prompt must be (no prefix cache may help it).
 */
export function makePrompt(tokens: number, salt = ''): ChatMessage[] {
  const words = Math.max(1, tokens - GENERATION_PROMPT_TOKENS - TEMPLATE_TOKENS_PER_MESSAGE);
  const parts: string[] = [];
  for (let i = 0; i < words; i++) parts.push(i === 0 && salt ? `${salt}` : `w${i % 997}`);
  return [{ role: 'user', content: parts.join(' ') }];
}
