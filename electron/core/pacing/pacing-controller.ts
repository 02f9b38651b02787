/**
 * The sharing policy `decode_first` (docs/sharing-policy.md), adaptive: a prefilling
 * runner is paced (smaller chunks, a pause after each) only while a neighbour on the
 * same GPU is decoding AND that neighbour's live ITL beside the prefill is really above
 * its solo ITL (LiveItl: engage at 1.2×, release at 1.05×). It goes back to full speed
 * when the neighbour stops, when its ITL recovers (after a short dwell), when the
 * prefill ends, or when the prefill's added time reaches the ceiling. Where a prefill
 * does not slow the stream (two runners on idle CPU cores), nothing is paced and the
 * policy costs nothing. Every local runner of this Mac shares its one GPU.
 *
 * It reacts to phase changes (InstancePhases) and to the streams' token gaps (the
 * node's sharing measurement), and never waits for a runner: a pacing is one line on
 * the runner's stdin, applied at its next chunk. Decisions go to the node's event log
 * (`pacing_engaged` and `pacing_released` with the ITL figure that decided them,
 * `pacing_not_needed`), which the diagnosis reads.
 */
import { FULL_SPEED_PACING, type PrefillPacing } from '../../../shared/runner-protocol';
import type { SharingPolicy } from '../../../shared/sharing-policy';
import type { PacingSnapshot } from '../../../shared/snapshot';
import type { NewNodeEvent } from '../events/node-event';
import type { GpuPhase } from '../sharing/instance-phases';
import { LiveItl, type ItlFigure, type SoloItl } from './live-itl';
import { addedFraction, DEFAULT_PACING_TUNING, fullSpeedPrefillMs, pacedPacing, type MeasuredRates, type PacingTuning } from './pacing-plan';

export type { SharingPolicy };

export type { PacingReleaseReason, ItlFigure } from './pacing-release';
import type { PacingReleaseReason } from './pacing-release';
import { backoffDelayMs } from '../../../shared/backoff';

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
  /** Its solo decode over the sharing window (no neighbour busy): what its live ITL is compared with. */
  soloItl(): SoloItl;
  /**
   * Its calibrated ITL alone (ms per decode step at batch 1, the catalog's measured figure
   * for its model); null where none is known (a model outside the catalog).
   */
  calibratedItlMs(): number | null;
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
  /** Set while paced; `trigger`: the figure that engaged it. */
  engaged: { at: number; pacing: PrefillPacing; fraction: number; neighbours: string[]; neighbourIds: string[]; trigger: ItlFigure } | null;
  /** How many times this prefill was paced. */
  engagements: number;
  /** Streaming neighbours seen beside this prefill, and the highest live ITL ratio among them. */
  beside: Set<string>;
  peak: ItlFigure | null;
  /** Whether the policy was decode_first at some decision of this prefill (for `pacing_not_needed`). */
  policyOn: boolean;
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
  /** Per decoding runner: its live ITL beside a neighbour's prefill. */
  private readonly live = new Map<string, LiveItl>();
  /** Per runner: the last solo ITL its window trusted, kept once the window has no solo gaps left. */
  private readonly earlierSolo = new Map<string, SoloItl>();
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
    this.earlierSolo.delete(runnerId);
    const episode = this.episodes.get(runnerId);
    if (episode) this.endEpisode(runnerId, null, episode, 'runner_gone');
    this.evaluate();
  }

  /** Whether `runnerId`'s prefill is paced now (for the snapshot). */
  pacedNow(runnerId: string): { since: number; neighbours: string[]; pacing: PrefillPacing; trigger: ItlFigure } | null {
    const engaged = this.episodes.get(runnerId)?.engaged;
    return engaged ? { since: engaged.at, neighbours: [...engaged.neighbours], pacing: engaged.pacing, trigger: { ...engaged.trigger } } : null;
  }

  /**
   * One inter-token gap of `runnerId`'s stream (the node's sharing measurement calls it
   * for every gap); `besidePrefill`: a neighbour on this GPU prefilled during it. Only
   * those gaps tell whether a prefill slows the stream.
   */
  observeGap(runnerId: string, gapMs: number, besidePrefill: boolean): void {
    if (!besidePrefill || this.options.policy() !== 'decode_first') return;
    const runner = this.options.runners().find((r) => r.id === runnerId);
    if (!runner || runner.phase() !== 'decoding') return;
    let live = this.live.get(runnerId);
    if (!live) this.live.set(runnerId, (live = new LiveItl(runner.label, this.tuning)));
    live.add(gapMs, this.baselineOf(runner).solo ?? { gaps: 0, itlP50Ms: null });
    this.evaluate();
  }

  /**
   * What a stream's live ITL is compared with, and where it comes from: its solo window
   * when that has enough gaps; else the solo figure the window last trusted (earlier);
   * else the runner's calibrated figure. A model busy from its first request never gets
   * a solo window, and must still be paced. `waiting`: none known yet.
   */
  baselineOf(runner: PacedRunner): { source: 'solo' | 'earlier' | 'calibrated' | 'waiting'; solo: SoloItl | null } {
    const window = runner.soloItl();
    if (window.gaps >= this.tuning.minSoloGaps && window.itlP50Ms !== null && window.itlP50Ms > 0) {
      this.earlierSolo.set(runner.id, window);
      return { source: 'solo', solo: window };
    }
    const earlier = this.earlierSolo.get(runner.id);
    if (earlier) return { source: 'earlier', solo: earlier };
    const calibrated = runner.calibratedItlMs();
    if (calibrated !== null && calibrated > 0) return { source: 'calibrated', solo: { gaps: this.tuning.minSoloGaps, itlP50Ms: calibrated } };
    return { source: 'waiting', solo: null };
  }

  /** Whether pacing `runnerId`'s stream waits for a baseline (no solo, earlier or calibrated ITL known), for the card. */
  waitingForBaseline(runnerId: string): boolean {
    const runner = this.options.runners().find((r) => r.id === runnerId);
    return runner !== undefined && this.options.policy() === 'decode_first' && this.baselineOf(runner).source === 'waiting';
  }

  /** Re-decides every runner's pacing; called on every phase change, every gap beside a prefill and when the setting changes. */
  evaluate(): void {
    const runners = this.options.runners();
    const policy = this.options.policy();
    // A stream's live window lasts while it decodes beside some prefill: a later prefill starts afresh.
    const anyPrefilling = runners.some((r) => r.phase() === 'prefilling');
    for (const id of [...this.live.keys()]) {
      const r = runners.find((x) => x.id === id);
      if (!anyPrefilling || !r || r.phase() !== 'decoding') this.live.delete(id);
    }
    const now = this.now();
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
      if (policy === 'decode_first') current.policyOn = true;
      for (const n of decoding) {
        current.beside.add(n.label);
        const figure = this.live.get(n.id)?.figure;
        if (figure && (current.peak === null || figure.ratio > current.peak.ratio)) current.peak = figure;
      }
      const interfered = decoding.filter((n) => this.live.get(n.id)?.interfered);
      const want = policy === 'decode_first' && interfered.length > 0 && !current.exhausted;
      if (want && !current.engaged) this.engage(runner, current, decoding, interfered);
      else if (!want && current.engaged) {
        if (policy === 'off') this.release(runner, current, 'policy_off');
        else if (!decoding.some((n) => current.engaged!.neighbourIds.includes(n.id))) this.release(runner, current, 'neighbour_stopped');
        // The stream is back near its solo ITL: full speed, after a dwell so one good stretch does not flap it.
        else if (now - current.engaged.at >= this.dwellMs(current)) this.release(runner, current, 'neighbour_recovered', this.figureOf(decoding));
      }
    }
    for (const [id, episode] of this.episodes) {
      if (!runners.some((r) => r.id === id)) this.endEpisode(id, null, episode, 'runner_gone');
    }
  }

  /**
   * How long a pacing runs before a recovered ITL may release it. A stream that recovers
   * under pacing often recovered because of it, and releasing is the only way to find
   * out; each new engagement of the same prefill doubles the dwell (up to 16×), so that
   * probe happens less and less often instead of flapping once a second.
   */
  private dwellMs(episode: Episode): number {
    const base = this.tuning.minPacedMs;
    return backoffDelayMs(episode.engagements, { baseDelayMs: base, maxDelayMs: base * 16 });
  }

  /** The live figure of the neighbour that weighs most (highest ratio) among `runners`. */
  private figureOf(runners: PacedRunner[]): ItlFigure | null {
    let best: ItlFigure | null = null;
    for (const r of runners) {
      const f = this.live.get(r.id)?.figure;
      if (f && (best === null || f.ratio > best.ratio)) best = f;
    }
    return best;
  }

  dispose(): void {
    for (const off of this.unsubscribe.values()) off();
    this.unsubscribe.clear();
    for (const episode of this.episodes.values()) if (episode.ceilingTimer) clearTimeout(episode.ceilingTimer);
    this.episodes.clear();
    this.live.clear();
  }

  private beginEpisode(runner: PacedRunner): Episode {
    const episode: Episode = {
      runnerId: runner.id,
      label: runner.label,
      fullSpeedMs: fullSpeedPrefillMs(runner.prefillRemainingTokens(), runner.supervisor.rates),
      addedMs: 0,
      engaged: null,
      engagements: 0,
      beside: new Set(),
      peak: null,
      policyOn: false,
      exhausted: false,
      ceilingTimer: null,
    };
    this.episodes.set(runner.id, episode);
    return episode;
  }

  private engage(runner: PacedRunner, episode: Episode, decoding: PacedRunner[], interfered: PacedRunner[]): void {
    const trigger = this.figureOf(interfered);
    if (!trigger) return;
    const neighbourStepMs = Math.max(...decoding.map((n) => n.supervisor.rates.decodeStepMs(1)));
    const pacing = pacedPacing(runner.supervisor.rates, neighbourStepMs, this.tuning);
    if (runner.supervisor.setPrefillPacing(pacing) === null) return;
    const fraction = addedFraction(pacing, runner.supervisor.rates);
    const now = this.now();
    episode.engaged = { at: now, pacing, fraction, neighbours: decoding.map((n) => n.label), neighbourIds: decoding.map((n) => n.id), trigger };
    episode.engagements += 1;
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
      data: { model: runner.label, neighbours: episode.engaged.neighbours, chunkTokens: pacing.chunkTokens, pauseMs: pacing.pauseMs, trigger },
    });
  }

  private release(runner: PacedRunner | null, episode: Episode, reason: PacingReleaseReason, itl: ItlFigure | null = null): void {
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
        itl,
      },
    });
  }

  private endEpisode(runnerId: string, runner: PacedRunner | null, episode: Episode, reason: PacingReleaseReason): void {
    if (episode.engaged) this.release(runner, episode, reason);
    // A prefill beside a stream that the policy chose not to pace: said once, with the figure.
    else if (reason === 'prefill_done' && episode.policyOn && episode.engagements === 0 && episode.beside.size > 0) {
      this.options.log({
        kind: 'pacing_not_needed',
        instanceId: runnerId,
        data: { model: episode.label, neighbours: [...episode.beside], peak: episode.peak, engageItlRatio: this.tuning.engageItlRatio },
      });
    }
    if (episode.ceilingTimer) clearTimeout(episode.ceilingTimer);
    this.episodes.delete(runnerId);
  }
}

/** The snapshot's `pacing` of an instance: epoch ms for `since` (the controller keeps monotonic ms). */
export function pacingSnapshot(paced: ReturnType<PacingController['pacedNow']>, nowMonotonic: number): PacingSnapshot | null {
  if (paced === null) return null;
  return { since: Date.now() - (nowMonotonic - paced.since), neighbours: paced.neighbours, ...paced.pacing, trigger: paced.trigger };
}
