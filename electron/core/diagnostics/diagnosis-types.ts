/**
 * The types of the bundle's diagnosis (electron/core/diagnostics/diagnosis.ts), apart
 * from the code that builds it, so that each cause module can name the verdict it
 * returns without importing the composer that imports it.
 */
import type { PacingDecision } from '../pacing/pacing-diagnosis';
import type { RequestTimeline } from '../node/node-types';
import type { DecodeFinding } from './decode-diagnosis';
import type { TtftParts } from '../node/request-metrics';

/** The causes a finding can name; each has its module in electron/core/diagnostics/causes/. */
export type StallCause =
  | 'queued_behind_same_model_prefill'
  | 'own_prefill'
  | 'shared_gpu'
  | 'node_dispatch_delay'
  /** Arrival to dispatch while the runner was starting, restarting or full: legitimate waiting. */
  | 'waiting_for_runner'
  /** The request came while its model was loading (a load on request, or one it joined): it waited for the load. */
  | 'model_load'
  /** It waited for a load that stopped moving (runner_load_stalled raised while it waited). */
  | 'runner_load_stalled'
  /** The watchdog found the runner silent and killed it; the request failed with runner_stuck. */
  | 'runner_stuck'
  | 'runner_crashed'
  /** Its decode ran markedly slower beside a neighbour's prefill or decode than the model's solo decode (decodeFindings). */
  | 'decode_slowed_by_neighbour'
  | 'unexplained';

/** The parts of a time to first token (they add up to the total); `load` only for a request that waited for its model to load. */
export type TtftPart = 'load' | 'dispatch' | 'ack_wait' | 'runner_wait' | 'prefill' | 'first_token';

/** What the diagnosis counts as slow, and the clock it measures unfinished requests against. */
export interface DiagnosisOptions {
  /** A TTFT at or above this is examined. Default 1000 ms. */
  thresholdMs: number;
  /** ... and so is one at or above this multiple of the model's solo median for a comparable prompt. Default 3. */
  soloMultiple: number;
  /** Slower than solo by at least this factor while another runner was busy counts as GPU sharing. Default 1.3. */
  sharedGpuSlowdown: number;
  /** Monotonic "now" (performance.now() of the node process) for requests still in flight. */
  now: number;
}

/** The thresholds used when the caller names none. */
export const DEFAULT_DIAGNOSIS_OPTIONS: Omit<DiagnosisOptions, 'now'> = {
  thresholdMs: 1000,
  soloMultiple: 3,
  sharedGpuSlowdown: 1.3,
};

export type { TtftParts } from '../node/request-metrics';

/** One examined request: its measured parts and the verdict on what held it up. */
export interface Finding {
  requestId: string;
  instanceId: string;
  model: string;
  outcome: RequestTimeline['outcome'];
  promptTokens: number;
  /** Arrival to first token; null when no token came (failed, cancelled, or still waiting). */
  ttftMs: number | null;
  /** Arrival until the first token, the end, or the export for a request still waiting. */
  elapsedMs: number;
  parts: TtftParts;
  dominantPart: TtftPart;
  cause: StallCause;
  /** True when the verdict points at a defect in exobar: report it. */
  bugToReport: boolean;
  /**
   * Prompt tokens the runner actually processed: all of them once the first token came;
   * for a request that ended before it (cancelled part-way, failed) the count the last
   * prefill progress reported. Rates are computed from this, never from the prompt size.
   */
  processedPromptTokens: number;
  /** The verdict in words, with its numbers. */
  explanation: string;
  evidence: Record<string, unknown>;
}

/** The part of a finding that states the cause. */
export type Verdict = Pick<Finding, 'cause' | 'bugToReport' | 'explanation' | 'evidence'>;

/** A watchdog kill or an unplanned runner exit, as the node's events recorded it. */
export interface RunnerIncident {
  instanceId: string;
  /** Monotonic ms of the event. */
  t: number;
  kind: 'watchdog' | 'exit';
  cause: string | null;
  code: number | null;
  signal: string | null;
  reason: string | null;
  phase: string | null;
  silentMs: number | null;
  /** The watchdog's adaptive deadline when it fired. */
  deadlineMs: number | null;
}

/** Per model, the solo TTFT the "slower than solo" comparisons stand on. */
export interface SoloReference {
  model: string;
  samples: number;
  /** Median arrival-to-first-token of requests that ran with no other runner busy. */
  medianTtftMs: number | null;
}

/** The whole diagnosis, as the bundle writes it to diagnosis.json. */
export interface Diagnosis {
  options: Omit<DiagnosisOptions, 'now'>;
  examinedRequests: number;
  findings: Finding[];
  /** Requests whose decode a neighbour on the GPU slowed (electron/core/diagnostics/decode-diagnosis.ts). */
  decodeFindings: DecodeFinding[];
  /** Findings per cause (decode findings included). */
  summary: Partial<Record<StallCause, number>>;
  runnerIncidents: RunnerIncident[];
  soloReference: SoloReference[];
  /** Instances whose runner reported fast synch on (latest hello): relevant to any shared_gpu verdict. */
  fastSynchOn: string[];
  /** The sharing policy's decisions: each paced prefill, beside whose stream, at what cost (docs/sharing-policy.md). */
  pacing: PacingDecision[];
}
