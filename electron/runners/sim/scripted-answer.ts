/**
 * The sim's deterministic answers to tools and structured output, so every API dialect
 * can be exercised without MLX (docs/runner-protocol.md, "Tools, structured output and
 * sampling"):
 * - tools with `toolChoice` `required` or `{name}`: one call to the named (else first)
 *   tool, its arguments an example of the tool's `parameters` schema;
 * - tools with `auto` (or none said): the same call while the conversation's last turn
 *   is not a tool result; after a tool result, a text answer (an agent's round trip);
 * - `responseFormat` `json_schema`: an example valid against the schema, as text tokens;
 *   `json_object`: a small JSON object.
 * Sampling fields change nothing here: the sim's words depend on the seed only.
 */
import type { GenerationParams, ToolCall } from '../../../shared/runner-protocol';
import { schemaExample } from './schema-example';

export type ScriptedAnswer = { kind: 'tool_call'; call: ToolCall } | { kind: 'text'; pieces: string[] } | null;

/** FNV-1a, 32 bit, for a stable call id. */
function hash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, '0');
}

/** Text cut into token-sized pieces (about four characters, as tokenizers average). */
function pieces(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += 4) out.push(text.slice(i, i + 4));
  return out.length > 0 ? out : [''];
}

function toolCall(params: GenerationParams, commandId: string): ToolCall | null {
  const tools = params.tools ?? [];
  const choice = params.toolChoice ?? 'auto';
  if (tools.length === 0 || choice === 'none') return null;
  if (choice === 'auto') {
    const last = params.messages[params.messages.length - 1];
    if (last?.role === 'tool') return null;
  }
  const tool = typeof choice === 'object' ? (tools.find((t) => t.name === choice.name) ?? tools[0]!) : tools[0]!;
  const args = tool.parameters ? schemaExample(tool.parameters) : {};
  return { id: `call_${hash(commandId)}`, name: tool.name, arguments: JSON.stringify(args) };
}

/** The scripted answer for `params`; null: the sim's ordinary words. */
export function scriptedAnswer(params: GenerationParams, commandId: string): ScriptedAnswer {
  const call = toolCall(params, commandId);
  if (call) return { kind: 'tool_call', call };
  const format = params.responseFormat;
  if (format?.type === 'json_schema') return { kind: 'text', pieces: pieces(JSON.stringify(schemaExample(format.schema))) };
  if (format?.type === 'json_object') return { kind: 'text', pieces: pieces(JSON.stringify({ answer: 'sim' })) };
  return null;
}
