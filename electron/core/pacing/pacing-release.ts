/** The pacing vocabulary of the node's events: a leaf, so the node's event types need no pacing code. */

/** Why a paced prefill went back to full speed. `neighbour_recovered`: the stream's live ITL came back near its solo ITL. */
export type PacingReleaseReason = 'neighbour_stopped' | 'neighbour_recovered' | 'prefill_done' | 'ceiling' | 'policy_off' | 'runner_gone';

/** The figure a pacing decision was taken on: a streaming neighbour's live ITL, its solo ITL (ms) and their ratio. */
export interface ItlFigure {
  /** The neighbour's model name. */
  neighbour: string;
  itlMs: number;
  soloItlMs: number;
  ratio: number;
}
