/**
 * Short explanations of the words an operator new to exo meets on the page, shown as
 * tooltips on the word itself (the word stays, since exo's docs and logs use it).
 */
export const JARGON = {
  ring: "ring: exo's instance type that passes data between processes over sockets (works everywhere; with fast synch on, two of them can wedge the shared GPU)",
  jaccl: "JACCL: exo's instance type over RDMA (Thunderbolt 5) between Macs; it keeps fast synch on only while no other model shares its GPU",
  fastSynch:
    'Fast synch (MLX_METAL_FAST_SYNCH): a faster way for MLX to wait for the GPU. exobar turns it off for ring instances sharing a GPU, where it can hang the GPU',
  ttft: 'TTFT, time to first token: how long a client waited for its first token (waiting in the queue + prefill of the prompt + the first token)',
} as const;

/** "Requests this model holds (waiting or running). At 64, a new request is refused with 429 queue_full." */
export function queueExplanation(capacity: number | null): string {
  const held = 'Requests this model holds: waiting in the queue or running on the runner.';
  return capacity === null ? held : `${held} At ${capacity}, a new request is refused with 429 (queue_full) until one finishes.`;
}
