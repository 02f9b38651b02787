/**
 * The sharing policy `decode_first` (docs/sharing-policy.md): while a neighbour on the
 * same GPU has a stream decoding, a prefilling runner works in smaller chunks and pauses
 * between them; when no neighbour decodes, or its added prefill time reaches the
 * ceiling, it goes back to full speed. Every local runner of this Mac shares its one GPU.
 *
 * It reacts to phase changes (InstancePhases) and never waits for a runner: a pacing is
 * one line on the runner's stdin, applied at its next chunk. Decisions go to the node's
 * event log (`pacing_engaged`, `pacing_released`), which the diagnosis reads.
 */
import { FULL_SPEED_PACING, type PrefillPacing } from '../../../shared/runner-protocol';
import type { SharingPolicy } from '../../../shared/sharing-policy';
import type { PacingSnapshot } from '../../../shared/snapshot';
import type { NewNodeEvent } from '../node/node-event';
import type { GpuPhase } from '../sharing/instance-phases';
import { addedFraction, DEFAULT_PACING_TUNING, fullSpeedPrefillMs, pacedPacing, type MeasuredRates, type PacingTuning } from './pacing-plan';

export type { SharingPolicy };

export type { PacingReleaseReason } from './pacing-release';
import type { PacingReleaseReason } from './pacing-release';

/** What the controller needs of one local instance (Instance provides it). */
export interface PacedRunner {
  id: string;
  /** The model's name, for the words of the diagnosis. */
  label: string;
  phase(): GpuPhase;
  /** Hears every phase change; returns the unsubscribe. */
  onPhaseChange(listener: () => void): () => void;
  /** Prompt tokens not yet prefilled of the requests it is prefilling now. */
  prefillRemainingTokens(): number;
  supervisor: {
    readonly supportsPacing: boolean;
    setPrefillPacing(pacing: PrefillPacing): string | null;
    readonly rates: MeasuredRates;
  };
}

interface Episode {
  runnerId: string;
  label: string;
  /** The prefill's full-speed time (ms) when it began: what the ceiling is a fraction of. */
  fullSpeedMs: number;
  /** Estimated prefill time pacing added so far, ms. */
  addedMs: number;
  /** Set while paced. */
  engaged: { at: number; pacing: PrefillPacing; fraction: number; neighbours: string[] } | null;
  /** The ceiling was reached: full speed until this prefill ends. */
  exhausted: boolean;
  ceilingTimer: NodeJS.Timeout | null;
}

export interface PacingControllerOptions {
  runners: () => PacedRunner[];
  policy: () => SharingPolicy;
  log: (event: NewNodeEvent) => void;
  tuning?: Partial<PacingTuning>;
  now?: () => number;
}

export class PacingController {
  private readonly episodes = new Map<string, Episode>();
  private readonly unsubscribe = new Map<string, () => void>();
  private readonly tuning: PacingTuning;
  private readonly now: () => number;

  constructor(private readonly options: PacingControllerOptions) {
    this.tuning = { ...DEFAULT_PACING_TUNING, ...options.tuning };
    this.now = options.now ?? (() => performance.now());
  }

  /** Starts watching a runner (call when the instance is created). */
  add(runner: PacedRunner): void {
    this.unsubscribe.get(runner.id)?.();
    this.unsubscribe.set(
      runner.id,
      runner.onPhaseChange(() => this.evaluate()),
    );
    this.evaluate();
  }

  /** Stops watching a runner (call when the instance is deleted). */
  remove(runnerId: string): void {
    this.unsubscribe.get(runnerId)?.();
    this.unsubscribe.delete(runnerId);
    const episode = this.episodes.get(runnerId);
    if (episode) this.endEpisode(runnerId, null, episode, 'runner_gone');
    this.evaluate();
  }

  /** Whether `runnerId`'s prefill is paced now (for the snapshot). */
  pacedNow(runnerId: string): { since: number; neighbours: string[]; pacing: PrefillPacing } | null {
    const engaged = this.episodes.get(runnerId)?.engaged;
    return engaged ? { since: engaged.at, neighbours: [...engaged.neighbours], pacing: engaged.pacing } : null;
  }

  /** Re-decides every runner's pacing; called on every phase change and when the setting changes. */
  evaluate(): void {
    const runners = this.options.runners();
    const policy = this.options.policy();
    for (const runner of runners) {
      const episode = this.episodes.get(runner.id);
      if (runner.phase() !== 'prefilling') {
        if (episode) this.endEpisode(runner.id, runner, episode, 'prefill_done');
        continue;
      }
      // An older runner (protocol 1) cannot be paced: left alone, no episode.
      if (!runner.supervisor.supportsPacing) continue;
      const current = episode ?? this.beginEpisode(runner);
      const decoding = runners.filter((other) => other.id !== runner.id && other.phase() === 'decoding');
      const want = policy === 'decode_first' && decoding.length > 0 && !current.exhausted;
      if (want && !current.engaged) this.engage(runner, current, decoding);
      else if (!want && current.engaged) this.release(runner, current, policy === 'off' ? 'policy_off' : 'neighbour_stopped');
    }
    for (const [id, episode] of this.episodes) {
      if (!runners.some((r) => r.id === id)) this.endEpisode(id, null, episode, 'runner_gone');
    }
  }

  dispose(): void {
    for (const off of this.unsubscribe.values()) off();
    this.unsubscribe.clear();
    for (const episode of this.episodes.values()) if (episode.ceilingTimer) clearTimeout(episode.ceilingTimer);
    this.episodes.clear();
  }

  private beginEpisode(runner: PacedRunner): Episode {
    const episode: Episode = {
      runnerId: runner.id,
      label: runner.label,
      fullSpeedMs: fullSpeedPrefillMs(runner.prefillRemainingTokens(), runner.supervisor.rates),
      addedMs: 0,
      engaged: null,
      exhausted: false,
      ceilingTimer: null,
    };
    this.episodes.set(runner.id, episode);
    return episode;
  }

  private engage(runner: PacedRunner, episode: Episode, decoding: PacedRunner[]): void {
    const neighbourStepMs = Math.max(...decoding.map((n) => n.supervisor.rates.decodeStepMs(1)));
    const pacing = pacedPacing(runner.supervisor.rates, neighbourStepMs, this.tuning);
    if (runner.supervisor.setPrefillPacing(pacing) === null) return;
    const fraction = addedFraction(pacing, runner.supervisor.rates);
    const now = this.now();
    episode.engaged = { at: now, pacing, fraction, neighbours: decoding.map((n) => n.label) };
    // The ceiling: paced wall time adds `fraction` of itself; stop when the budget is spent.
    const budgetMs = this.tuning.ceiling * episode.fullSpeedMs - episode.addedMs;
    const pacedForMs = Math.max(0, budgetMs / Math.max(fraction, 1e-6));
    episode.ceilingTimer = setTimeout(() => {
      episode.ceilingTimer = null;
      if (this.episodes.get(runner.id) !== episode || !episode.engaged) return;
      episode.exhausted = true;
      this.release(runner, episode, 'ceiling');
    }, pacedForMs);
    episode.ceilingTimer.unref?.();
    this.options.log({
      kind: 'pacing_engaged',
      instanceId: runner.id,
      data: { model: runner.label, neighbours: episode.engaged.neighbours, chunkTokens: pacing.chunkTokens, pauseMs: pacing.pauseMs },
    });
  }

  private release(runner: PacedRunner | null, episode: Episode, reason: PacingReleaseReason): void {
    const engaged = episode.engaged;
    if (!engaged) return;
    if (episode.ceilingTimer) clearTimeout(episode.ceilingTimer);
    episode.ceilingTimer = null;
    const pacedMs = this.now() - engaged.at;
    episode.addedMs += pacedMs * engaged.fraction;
    episode.engaged = null;
    // Also when the prefill ended: the runner's next prompt starts at full speed.
    if (runner && reason !== 'runner_gone') runner.supervisor.setPrefillPacing(FULL_SPEED_PACING);
    const addedPct = episode.fullSpeedMs > 0 ? (100 * episode.addedMs) / episode.fullSpeedMs : 0;
    this.options.log({
      kind: 'pacing_released',
      instanceId: episode.runnerId,
      data: {
        model: episode.label,
        neighbours: engaged.neighbours,
        reason,
        pacedMs: Math.round(pacedMs),
        addedMs: Math.round(episode.addedMs),
        addedPct: Math.round(addedPct * 10) / 10,
      },
    });
  }

  private endEpisode(runnerId: string, runner: PacedRunner | null, episode: Episode, reason: PacingReleaseReason): void {
    if (episode.engaged) this.release(runner, episode, reason);
    if (episode.ceilingTimer) clearTimeout(episode.ceilingTimer);
    this.episodes.delete(runnerId);
  }
}

/** The snapshot's `pacing` of an instance: epoch ms for `since` (the controller keeps monotonic ms). */
export function pacingSnapshot(paced: ReturnType<PacingController['pacedNow']>, nowMonotonic: number): PacingSnapshot | null {
  if (paced === null) return null;
  return { since: Date.now() - (nowMonotonic - paced.since), neighbours: paced.neighbours, ...paced.pacing };
}
