/**
 * What the split watch reads from exo, validated: `/state/nodeNetwork` of the attached
 * node (each Mac's network interfaces, the only addresses exo publishes for its Macs:
 * exo 0.3.70's NodeNetworkInfo, src/exo/shared/types/profiling.py), and a departed Mac's own
 * `/state` (only the Macs its exo sees now, `topology.nodes`).
 */
import { z } from 'zod';
import { exoObject, maybe } from '../attach/exo-schema-helpers';

const InterfaceSchema = exoObject({ name: maybe(z.string()), ipAddress: z.string() });

/** `nodeNetwork`: node id → its interfaces. */
export const NodeNetworkSchema = z.record(z.string(), exoObject({ interfaces: z.array(z.unknown()).default([]) }));

/** A Mac's own state, as far as the probe reads it. */
export const SplitStateSchema = exoObject({ topology: exoObject({ nodes: z.array(z.string()) }) });

/** An address exobar may probe: IPv4, or IPv6 that is not link-local (a link-local one needs a zone exo does not publish). */
function probeable(ip: string): boolean {
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(ip)) return !ip.startsWith('0.') && !ip.startsWith('169.254.');
  return ip.includes(':') && !ip.toLowerCase().startsWith('fe80');
}

/** The addresses exo published for each Mac (interfaces that fail the schema are skipped, the rest kept). */
export function parseNodeAddresses(value: unknown): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const parsed = NodeNetworkSchema.safeParse(value);
  if (!parsed.success) return out;
  for (const [nodeId, info] of Object.entries(parsed.data)) {
    const ips = info.interfaces.flatMap((raw) => {
      const one = InterfaceSchema.safeParse(raw);
      return one.success && probeable(one.data.ipAddress) ? [one.data.ipAddress] : [];
    });
    out.set(nodeId, [...new Set(ips)]);
  }
  return out;
}
