/**
 * The runner's prefill pacing (protocol 2, docs/runner-protocol.md): the chunk size and
 * the pause after each chunk that the supervisor last asked for. A SetPrefillPacing is
 * read at the points where the engine reads anything (between steps, at every prefill
 * chunk boundary, when idle), acknowledged there with PrefillPacingApplied, and used from
 * the next chunk on.
 */
import { DEFAULT_PREFILL_CHUNK_TOKENS, FULL_SPEED_PACING, type PrefillPacing, type SetPrefillPacing } from '../../../shared/runner-protocol';
import type { Inbox } from './inbox';
import type { Logger } from './logger';
import type { RunnerOutputWriter } from './output';

export class PrefillPacingState {
  private current: PrefillPacing = FULL_SPEED_PACING;

  constructor(
    private readonly out: RunnerOutputWriter,
    private readonly inbox: Inbox,
    private readonly log: Logger,
  ) {}

  /** Applies every pacing that has arrived, in order; `commandId` is the prefill running now, if any. */
  applyArrived(commandId: string | null): void {
    for (const message of this.inbox.takePacings()) this.apply(message, commandId);
  }

  /** Applies one pacing and acknowledges it. */
  apply(message: SetPrefillPacing, commandId: string | null): void {
    this.current = { chunkTokens: message.chunkTokens, pauseMs: message.pauseMs };
    this.out.emit({ type: 'PrefillPacingApplied', pacingId: message.pacingId, ...this.current, commandId });
    this.log.info({ pacingId: message.pacingId, ...this.current, commandId }, 'prefill pacing applied');
  }

  /** The chunk the supervisor asked for; null: the runner's own (its schedule decides). */
  get requestedChunkTokens(): number | null {
    return this.current.chunkTokens;
  }

  /** Prompt tokens of the next prefill chunk (exo's schedule). */
  get chunkTokens(): number {
    return this.current.chunkTokens ?? DEFAULT_PREFILL_CHUNK_TOKENS;
  }

  /** Pause after a chunk that is not the prompt's last, in (simulated) ms. */
  get pauseMs(): number {
    return this.current.pauseMs;
  }
}
