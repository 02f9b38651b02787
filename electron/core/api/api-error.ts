/**
 * Every error answer of the API, in OpenAI's error shape
 * (`{"error": {"message", "type", "code", "param"}}`), so an OpenAI client raises
 * its usual typed exception.
 */
import type { ApiErrorBody } from '../../../shared/api';
import { NodeError } from '../node/node-types';

/** An error to answer with; `rejectedInput` marks input refused at the HTTP boundary (counted). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly options: {
      param?: string | null;
      rejectedInput?: boolean;
      headers?: Record<string, string>;
      /** Extra fields of the error object a client can act on (e.g. `requests` for `requests_in_flight`). */
      details?: Record<string, unknown>;
    } = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  get rejectedInput(): boolean {
    return this.options.rejectedInput ?? false;
  }
}

/** Refused input (malformed, oversized, unauthenticated, cross-origin): counted per boundary. */
export function rejected(status: number, code: string, message: string, param?: string | null): ApiError {
  return new ApiError(status, code, message, { param: param ?? null, rejectedInput: true });
}

/** OpenAI's `type` for a status, as its API uses them. */
export function errorTypeForStatus(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403 || status === 421) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 409) return 'conflict_error';
  if (status === 429) return 'rate_limit_error';
  if (status === 503) return 'service_unavailable_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/** Fallback statuses by node error code, for a NodeError whose status is not a valid HTTP error. */
const STATUS_BY_NODE_CODE: Record<string, number> = {
  model_not_found: 404,
  instance_not_found: 404,
  queue_full: 429,
  runner_failed: 503,
  runner_crashed: 503,
  runner_stuck: 503,
  instance_deleted: 503,
  node_shutdown: 503,
  invalid_request: 400,
  fast_synch_shared_gpu: 409,
  fast_synch_mismatch: 409,
  exo_restart_required: 409,
  launch_failed: 503,
  model_already_running: 409,
  requests_in_flight: 409,
  insufficient_memory: 409,
};

/** Maps anything thrown by a handler or by the node to an {@link ApiError}. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (isNodeError(error)) {
    const status = Number.isInteger(error.status) && error.status >= 400 && error.status <= 599 ? error.status : (STATUS_BY_NODE_CODE[error.code] ?? 500);
    return new ApiError(status, error.code, error.message, error.details ? { details: error.details } : {});
  }
  return new ApiError(500, 'internal_error', 'unexpected error in exobar; see its log');
}

function isNodeError(error: unknown): error is NodeError {
  if (error instanceof NodeError) return true;
  // Duck-typed too: a NodeError from another copy of the module (bundled Electron main) is still one.
  const e = error as { name?: unknown; code?: unknown; status?: unknown } | null;
  return e != null && e.name === 'NodeError' && typeof e.code === 'string' && typeof e.status === 'number';
}

export function errorBody(error: ApiError): ApiErrorBody {
  return {
    error: {
      message: error.message,
      type: errorTypeForStatus(error.status),
      code: error.code,
      param: error.options.param ?? null,
      ...error.options.details,
    },
  };
}
