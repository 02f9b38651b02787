/**
 * A request's decode figures as production computes them (DecodeTiming), for
 * fixtures of finished requests: `tokens` tokens evenly spaced from the first token
 * to the last.
 */
import { DecodeTiming, type DecodeStats } from '../../electron/core/sharing/decode-timing';
import { RequestSharing, type RequestDecodeSharing } from '../../electron/core/sharing/request-sharing';
import type { BusyNeighbour } from '../../electron/core/sharing/sharing-stats';

/** `beside`: the neighbours busy through the whole decode (none: it decoded alone). */
export function evenDecode(
  tokens: number,
  firstTokenAt: number,
  lastTokenAt: number,
  beside: BusyNeighbour[] = [],
): DecodeStats & { decodeSharing: RequestDecodeSharing } {
  const sharing = new RequestSharing();
  const timing = new DecodeTiming((gap) => sharing.add(gap, beside));
  for (let i = 0; i < tokens; i++) timing.record(tokens > 1 ? firstTokenAt + ((lastTokenAt - firstTokenAt) * i) / (tokens - 1) : firstTokenAt);
  return { ...timing.stats(), decodeSharing: sharing.value() };
}
