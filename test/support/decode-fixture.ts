/**
 * A request's decode figures as production computes them (DecodeTiming), for
 * fixtures of finished requests: `tokens` tokens evenly spaced from the first token
 * to the last.
 */
import { DecodeTiming, type DecodeStats } from '../../electron/core/sharing/decode-timing';

export function evenDecode(tokens: number, firstTokenAt: number, lastTokenAt: number): DecodeStats {
  const timing = new DecodeTiming();
  for (let i = 0; i < tokens; i++) timing.record(tokens > 1 ? firstTokenAt + ((lastTokenAt - firstTokenAt) * i) / (tokens - 1) : firstTokenAt);
  return timing.stats();
}
