/**
 * "Is there an exo at this address?": the check behind "test the address first" and
 * the offer to attach to an exo found on this Mac. Both only read `GET /node_id`
 * (and the node list for the count); neither attaches.
 */
import { z } from 'zod';
import type { ExoOffer } from '../../../../shared/exo-snapshot';
import { DEFAULT_EXO_HTTP, exoAgent, getExoJson, type ExoFetchError } from './exo-http';
import { LOCAL_EXO_URL } from '../../../../shared/addresses';

/** exo's default API address on this Mac (exo 0.3.70, src/exo/api/main.py; docs/exo.md "exo source this code follows"). */
export { LOCAL_EXO_URL };

/** exo's node id: 32 hex characters today; any short token is accepted. */
export const NodeIdSchema = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/);

export type ExoUrlResult = { ok: true; url: string } | { ok: false; error: string };

/** Checks and normalizes an exo address ("http://host:port", no path): the one rule for the CLI flag and the setting. */
export function normalizeExoUrl(input: string): ExoUrlResult {
  let url: URL;
  try {
    url = new URL(input.trim());
  } catch {
    return { ok: false, error: `"${input}" is not a URL (expected e.g. http://127.0.0.1:52415)` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, error: `exo's API is http or https, not ${url.protocol}` };
  if (url.username || url.password) return { ok: false, error: 'exo has no login: leave user and password out of the address' };
  return { ok: true, url: url.origin };
}

export type ExoProbeResult =
  | { ok: true; url: string; nodeId: string; /** Macs in exo's topology, when it answered. */ nodes: number | null }
  | { ok: false; url: string; error: ExoFetchError };

/** Tests an exo address: `/node_id` must answer with a node id. Never throws. */
export async function probeExo(input: string, timeoutMs = 2_000): Promise<ExoProbeResult> {
  const normalized = normalizeExoUrl(input);
  if (!normalized.ok) return { ok: false, url: input, error: { kind: 'unreachable', message: normalized.error } };
  const base = new URL(normalized.url);
  const agent = exoAgent(base);
  const http = { ...DEFAULT_EXO_HTTP, timeoutMs, maxBytes: 1024 * 1024 };
  try {
    const answer = await getExoJson(base, '/node_id', agent, http);
    if (!answer.ok) return { ok: false, url: normalized.url, error: answer.error };
    const nodeId = NodeIdSchema.safeParse(answer.value);
    if (!nodeId.success)
      return { ok: false, url: normalized.url, error: { kind: 'not_json', message: 'GET /node_id: the answer is not an exo node id (is this exo?)' } };
    const topology = await getExoJson(base, '/state/topology/nodes', agent, http);
    const nodes = topology.ok && Array.isArray(topology.value) ? topology.value.length : null;
    return { ok: true, url: normalized.url, nodeId: nodeId.data, nodes };
  } finally {
    agent.destroy();
  }
}

/**
 * The offer to attach: an exo answering on this Mac's default address, or null. It
 * never attaches by itself; the views ask first.
 */
export async function findLocalExo(now: () => number = Date.now, url = LOCAL_EXO_URL, timeoutMs = 1_000): Promise<ExoOffer | null> {
  const probe = await probeExo(url, timeoutMs);
  return probe.ok ? { url: probe.url, nodeId: probe.nodeId, foundAt: now() } : null;
}
