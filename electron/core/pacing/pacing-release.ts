/** Why a paced prefill went back to full speed: a leaf, so the node's event vocabulary needs no pacing code. */
export type PacingReleaseReason = 'neighbour_stopped' | 'prefill_done' | 'ceiling' | 'policy_off' | 'runner_gone';
