/**
 * The generation work a runner has in hand as the watchdog sees it, and what its chunks
 * teach about its speed: prefill chunks give seconds per prompt token, consecutive
 * tokens of one request give the decode step. Reads the task ledger; writes the
 * learned rates and each task's progress.
 */
import { DEFAULT_PREFILL_CHUNK_TOKENS, MAX_DECODE_BATCH, type Chunk } from '../../../shared/runner-protocol';
import type { RunnerRates } from './runner-rates';
import type { InProgressTask, TaskLedger } from './task-ledger';
import type { WatchdogWork } from './watchdog';

/** exo's prefill chunk: the longest prefill step between two progress lines. */
const PREFILL_CHUNK_TOKENS = DEFAULT_PREFILL_CHUNK_TOKENS;
/** exo's batch: requests decoding together at most. */
const MAX_BATCH = MAX_DECODE_BATCH;

export class RunnerWork {
  /** When the last prefill progress arrived: a prefill between two tokens is not a decode step. */
  private lastPrefillAt = 0;

  constructor(
    private readonly ledger: TaskLedger,
    private readonly rates: RunnerRates,
  ) {}

  /** Learns from one chunk of `entry`, `sinceLastLineMs` after the runner's previous line; `now` is performance.now(). */
  learn(entry: InProgressTask, chunk: Chunk, sinceLastLineMs: number, now: number): void {
    if (chunk.kind === 'PrefillProgressChunk') {
      const tokens = chunk.processedTokens - entry.processed;
      this.rates.recordPrefillChunk(tokens, sinceLastLineMs, entry.processed === 0);
      entry.processed = chunk.processedTokens;
      entry.promptTokens = chunk.totalTokens;
      this.lastPrefillAt = now;
    } else if (chunk.kind === 'TokenChunk') {
      if (entry.lastTokenAt !== null && this.lastPrefillAt < entry.lastTokenAt) {
        this.rates.recordDecodeStep(now - entry.lastTokenAt, this.decodingCount());
      }
      entry.lastTokenAt = now;
    }
  }

  /** The generation work in progress with its expected step from the measured rates; null when there is none. */
  current(): WatchdogWork | null {
    if (this.ledger.inProgress.size === 0) return null;
    let prefillTokens = -1;
    for (const entry of this.ledger.inProgress.values()) {
      if (entry.tokens > 0) continue;
      prefillTokens = Math.max(prefillTokens, Math.min(PREFILL_CHUNK_TOKENS, Math.max(0, entry.promptTokens - entry.processed)));
    }
    const batch = this.decodingCount();
    if (prefillTokens >= 0) return { phase: 'prefill', expectedStepMs: this.rates.prefillStepMs(prefillTokens, batch) };
    return { phase: 'decode', expectedStepMs: this.rates.decodeStepMs(batch) };
  }

  private decodingCount(): number {
    return Math.min(MAX_BATCH, Math.max(1, this.ledger.decoding()));
  }
}
