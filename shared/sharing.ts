/**
 * GPU sharing, measured: how a model decodes alone on its GPU and while a neighbour on
 * the same GPU prefills or decodes. Defined once, as zod schemas; the snapshot carries a
 * `sharing` object per instance (electron/core/sharing/sharing-stats.ts fills it), and
 * the words here are the card's and the diagnosis's.
 */
import { z } from 'zod';

const ms = z.number().finite();

/** What a neighbour was doing while the model decoded. */
export const NeighbourPhaseSchema = z.enum(['prefilling', 'decoding']);
export type NeighbourPhase = z.infer<typeof NeighbourPhaseSchema>;

/** Decode figures over the inter-token gaps measured in one condition. */
export const SharingFiguresSchema = z.object({
  /** Inter-token gaps measured in this condition within the window. */
  gaps: z.number().int().nonnegative(),
  /** 1000 over the mean gap: one stream's tokens per second in this condition; null with no gap. */
  decodeTokensPerSecond: z.number().nullable(),
  itlP50Ms: ms.nullable(),
  itlP95Ms: ms.nullable(),
});
export type SharingFigures = z.infer<typeof SharingFiguresSchema>;

/** The model's decode while one neighbour was in one phase. */
export const SharingNeighbourSchema = SharingFiguresSchema.extend({
  instanceId: z.string(),
  model: z.string(),
  modelName: z.string(),
  phase: NeighbourPhaseSchema,
  /** The exo Mac they share (its name, else its node id); null for this Mac's own runners. */
  node: z.string().nullable(),
  /** This condition's decode tokens/s over the solo rate; null without both. */
  decodeRatio: z.number().nullable(),
  /** This condition's ITL p95 over the solo one; null without both. */
  itlP95Ratio: z.number().nullable(),
});
export type SharingNeighbour = z.infer<typeof SharingNeighbourSchema>;

export const InstanceSharingSchema = z.object({
  /** The rolling window the figures cover, ms. */
  windowMs: ms,
  /** No neighbour on the GPU was prefilling or decoding. */
  solo: SharingFiguresSchema,
  /** One entry per neighbour and phase seen in the window, most slowed first. */
  neighbours: z.array(SharingNeighbourSchema),
  /** The most slowed condition in plain words, once both it and solo have enough gaps; null otherwise. */
  summary: z.string().nullable(),
  /** `proxied`: only traffic through exobar is measured (exo); `all`: every request (local runners). */
  observed: z.enum(['all', 'proxied']),
});
export type InstanceSharing = z.infer<typeof InstanceSharingSchema>;

/** Gaps needed in a condition (and in solo) before its ratio is put in words. */
export const MIN_GAPS_FOR_WORDS = 20;

/** "prefills" / "decodes". */
export function phaseVerb(phase: NeighbourPhase): string {
  return phase === 'prefilling' ? 'prefills' : 'decodes';
}

/** "decodes at 64 % of its solo rate while Llama 3.2 3B prefills" (on a Mac when named). */
export function sharingWords(n: Pick<SharingNeighbour, 'decodeRatio' | 'modelName' | 'phase' | 'node'>): string | null {
  if (n.decodeRatio === null) return null;
  const where = n.node ? ` on ${n.node}` : '';
  return `decodes at ${Math.round(n.decodeRatio * 100)} % of its solo rate while ${n.modelName} ${phaseVerb(n.phase)}${where}`;
}

/** An empty sharing object: nothing measured yet. */
export function emptySharing(windowMs: number, observed: InstanceSharing['observed']): InstanceSharing {
  return { windowMs, solo: { gaps: 0, decodeTokensPerSecond: null, itlP50Ms: null, itlP95Ms: null }, neighbours: [], summary: null, observed };
}
