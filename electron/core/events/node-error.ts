/**
 * The errors the node answers with, and their codes: a leaf that the node's public
 * types (node-types.ts) and its event log's vocabulary (node-event.ts) both import.
 */

export type NodeErrorCode =
  | 'model_not_found'
  | 'instance_not_found'
  | 'queue_full'
  | 'runner_failed'
  | 'runner_crashed'
  | 'runner_stuck'
  | 'instance_deleted'
  | 'node_shutdown'
  | 'invalid_request'
  | 'fast_synch_shared_gpu'
  | 'fast_synch_mismatch'
  | 'launch_failed'
  | 'model_already_running'
  | 'requests_in_flight'
  /** A pinned instance was asked to unload by itself (idle or eviction): only the operator stops it. */
  | 'instance_pinned'
  /** A load on request that cannot go ahead: it does not fit and nothing can unload, or a cap is reached. */
  | 'model_does_not_fit'
  /** A retry of an instance whose runner is neither failed nor waiting for the operator. */
  | 'not_retryable'
  /** The fit check refused a launch: the models need more memory than is free (`acknowledgeMemory: true` launches anyway). */
  | 'insufficient_memory'
  /** A request with tools for a model whose runner cannot take them (its Hello's `features.tools`). */
  | 'tools_unsupported'
  /** A request with a response format for a model whose runner cannot constrain its output. */
  | 'structured_output_unsupported';

/** An error the node answers with; `status` is the HTTP status the API maps it to. */
export class NodeError extends Error {
  constructor(
    readonly code: NodeErrorCode,
    message: string,
    readonly status: number,
    /** Extra fields of the API's error object a client can act on (e.g. the fit check's figures). */
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'NodeError';
  }
}
