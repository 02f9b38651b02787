/**
 * A streaming runner's live inter-token latency beside a neighbour's prefill, against its
 * own solo ITL (the sharing statistics' solo figures): what the adaptive `decode_first`
 * policy decides on. The live ITL is the median of the runner's last few gaps that
 * overlapped a neighbour's prefill (a median, so one slow step of a busy machine does
 * not decide alone); "interfered" turns on at `engageItlRatio` × solo and off at
 * `releaseItlRatio` × solo, so a ratio between the two keeps the last decision.
 */
import { median } from '../../../shared/stats';
import type { PacingTuning } from './pacing-plan';
import type { ItlFigure } from './pacing-release';

export type { ItlFigure };

/** Solo figures as SharingStats gives them (gaps in the window and their median). */
export interface SoloItl {
  gaps: number;
  itlP50Ms: number | null;
}

const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;

export class LiveItl {
  private readonly recent: number[] = [];
  private above = false;
  private last: ItlFigure | null = null;

  constructor(
    private readonly neighbour: string,
    private readonly tuning: Pick<PacingTuning, 'engageItlRatio' | 'releaseItlRatio' | 'itlWindowGaps' | 'minSoloGaps'>,
  ) {}

  /** Whether the runner's stream is slowed past the engage threshold (and not yet back under the release one). */
  get interfered(): boolean {
    return this.above;
  }

  /** The latest figure; null until a full window of gaps met a trusted solo ITL. */
  get figure(): ItlFigure | null {
    return this.last;
  }

  /**
   * One gap of the runner's stream that overlapped a neighbour's prefill. Returns true
   * when it flipped the interfered state.
   */
  add(gapMs: number, solo: SoloItl): boolean {
    this.recent.push(gapMs);
    if (this.recent.length > this.tuning.itlWindowGaps) this.recent.shift();
    if (this.recent.length < this.tuning.itlWindowGaps) return false;
    // Unknown solo ITL: interference cannot be told, and what cannot be told is not paced.
    if (solo.gaps < this.tuning.minSoloGaps || solo.itlP50Ms === null || solo.itlP50Ms <= 0) return false;
    // The window is full here (itlWindowGaps gaps), so the median exists.
    const itlMs = median(this.recent)!;
    const ratio = itlMs / solo.itlP50Ms;
    this.last = { neighbour: this.neighbour, itlMs: round(itlMs, 1), soloItlMs: round(solo.itlP50Ms, 1), ratio: round(ratio, 3) };
    if (!this.above && ratio >= this.tuning.engageItlRatio) return (this.above = true);
    if (this.above && ratio <= this.tuning.releaseItlRatio) {
      this.above = false;
      return true;
    }
    return false;
  }
}
