/**
 * What a runner can do beyond text (its Hello's `features`) and the node's refusal of a
 * request that asks for more: tools or a response format for a model whose runner said
 * it cannot, a 400 naming the model. One gate for every API dialect, below them all.
 */
import type { GenerationParams, Hello } from '../../../shared/runner-protocol';
import type { SubmitRequest } from './node-types';
import { NodeError } from '../events/node-error';

export type RunnerFeatures = NonNullable<Hello['features']>;

/** A runner whose hello says nothing of features can do neither. */
export const NO_FEATURES: RunnerFeatures = Object.freeze({ tools: false, structuredOutput: false });

/**
 * The refusal of `params` by a runner with `features`; null when it can serve them, or
 * when its hello has not come yet (checked again before the task is sent).
 */
export function featureRefusal(params: GenerationParams, features: RunnerFeatures | null, model: string): NodeError | null {
  if (features === null) return null;
  const wantsTools = (params.tools?.length ?? 0) > 0 && params.toolChoice !== 'none';
  if (wantsTools && !features.tools) {
    return new NodeError(
      'tools_unsupported',
      `${model} cannot call tools: its chat template takes no tools or its tokenizer declares no tool-call parser; send the request without tools, or use a model that has them`,
      400,
    );
  }
  if (params.responseFormat && !features.structuredOutput) {
    return new NodeError(
      'structured_output_unsupported',
      `${model} cannot constrain its output to a response format (its runner does no constrained decoding); ask for JSON in the messages, or use a model whose runner does`,
      400,
    );
  }
  return null;
}

/** The runner-protocol fields of a submit beyond text, only those given (the schema's optionals stay absent). */
export function beyondText(input: SubmitRequest): Partial<GenerationParams> {
  const out: Partial<GenerationParams> = {};
  if (input.tools && input.tools.length > 0) out.tools = input.tools;
  if (input.toolChoice !== undefined) out.toolChoice = input.toolChoice;
  if (input.responseFormat !== undefined) out.responseFormat = input.responseFormat;
  for (const key of ['topP', 'topK', 'minP', 'repetitionPenalty', 'presencePenalty', 'frequencyPenalty'] as const) {
    const value = input[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}
