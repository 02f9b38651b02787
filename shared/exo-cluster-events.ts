/**
 * What changed in an attached exo cluster, as exobar saw it from one poll to the next.
 * exo's `/state` records none of it (a Mac that leaves is simply absent, and so are the
 * instances exo deleted with it), so exobar compares successive states and keeps the
 * last events: in the snapshot (`exo.events`), the page's cluster timeline, the
 * diagnostic bundle (`exo/events.jsonl`) and the notifications for losses.
 */
import { z } from 'zod';

const epochMs = z.number().finite();

/** The kinds of cluster event. */
export const EXO_CLUSTER_EVENT_KINDS = [
  'node_joined',
  'node_left',
  'instance_placed',
  'instance_deleted',
  'runner_failed',
  'runner_recovered',
  'exo_restarted',
  'cluster_split',
] as const;

/**
 * Why an instance was placed or deleted, when exobar can tell: `exobar` (exobar itself
 * asked exo), `node_left` (exo deleted it after a Mac it used left), `exo_restarted`
 * (exo restarted on a Mac it used: a new node id, its instances gone), `other` (someone
 * else: exo's dashboard, another client, or exo's worker giving up on its runners).
 */
export const ExoEventCauseSchema = z.enum(['exobar', 'node_left', 'exo_restarted', 'other']);
export type ExoEventCause = z.infer<typeof ExoEventCauseSchema>;

/** A Mac named by an event. */
export const ExoEventNodeSchema = z.object({
  nodeId: z.string(),
  /** exo's friendly name; null when exo has not said. */
  name: z.string().nullable(),
  /** How the views name it: the name, with a short node id when two Macs share the name. */
  label: z.string(),
  /** Epoch ms of exo's lastSeen for it, as last read (a Mac that left: when exo last heard of it). */
  lastSeenAt: epochMs.nullable(),
});
export type ExoEventNode = z.infer<typeof ExoEventNodeSchema>;

export const ExoClusterEventSchema = z.object({
  /** Unique within one attachment, increasing: "e1", "e2", ... */
  id: z.string(),
  /** Epoch ms when exobar saw the change (exo's state carries no time for it). */
  at: epochMs,
  kind: z.enum(EXO_CLUSTER_EVENT_KINDS),
  /** The Macs involved: the one that joined or left, the ones an instance or runner ran on. */
  nodes: z.array(ExoEventNodeSchema),
  /** The model, for instance and runner events. */
  model: z.string().nullable(),
  /** exo's instance id, for instance and runner events. */
  instanceId: z.string().nullable(),
  /** Why, for placed and deleted instances; null for the other kinds. */
  cause: ExoEventCauseSchema.nullable(),
  /** The Macs whose leaving (or restart) caused it, for cause node_left or exo_restarted. */
  causeNodes: z.array(z.string()),
  /** True for what the operator loses: a Mac that left, an instance deleted not through exobar, a runner that failed. */
  loss: z.boolean(),
  /** The event in one line of words (not `text`: the bundle blanks every field of that name as prompt text). */
  summary: z.string(),
});
export type ExoClusterEvent = z.infer<typeof ExoClusterEventSchema>;

/** How many events the snapshot carries (the newest); the bundle has every one kept. */
export const EXO_EVENTS_IN_SNAPSHOT = 50;

/** What Place again answers: where exo placed the lost model (`POST /api/exo/lost-models/place-again`). */
export interface PlaceAgainResult {
  model: string;
  instanceId: string;
  /** The Macs exo placed it on (labels). */
  nodes: string[];
  /** True when an instance of the model was already there: nothing was placed. */
  alreadyPlaced: boolean;
}

/** How Place again is asked for: `acknowledgeRisk` places past the fast-synch gate. */
export interface PlaceAgainOptions {
  acknowledgeRisk: boolean;
}
