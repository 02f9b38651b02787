/** A refusal the control API answers with `status` and `code` (OpenAI error shape). */
export class ExoProcessError extends Error {
  override name = 'ExoProcessError';
  constructor(
    /** fast_synch_shared_gpu: the override needs acknowledgeRisk. exo_restart_required: send consent: true. */
    readonly code: 'fast_synch_shared_gpu' | 'exo_restart_required',
    message: string,
    readonly status = 409,
  ) {
    super(message);
  }
}
