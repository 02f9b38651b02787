/**
 * How the views name a Mac: exo's friendly name, with a short node id when two Macs
 * report the same name (two Macs set up alike, or two exo nodes on one machine, both
 * say "studio"), and the short id alone when exo has not said a name.
 */

/** The first characters of a node id, enough to tell two Macs apart at a glance. */
export function shortNodeId(nodeId: string): string {
  return nodeId.slice(0, 6);
}

/** One label per node id: the name where it is unique among `nodes`, "name (id…)" where it is not. */
export function nodeLabels(nodes: Iterable<readonly [string, { name: string | null }]>): Map<string, string> {
  const entries = [...nodes];
  const count = new Map<string, number>();
  for (const [, n] of entries) if (n.name !== null) count.set(n.name, (count.get(n.name) ?? 0) + 1);
  const labels = new Map<string, string>();
  for (const [id, n] of entries) {
    if (n.name === null) labels.set(id, `node ${shortNodeId(id)}`);
    else labels.set(id, (count.get(n.name) ?? 0) > 1 ? `${n.name} (${shortNodeId(id)})` : n.name);
  }
  return labels;
}

/** A label for one node of `nodes`; a node not in it is named by its short id. */
export function labelOf(labels: Map<string, string>, nodeId: string): string {
  return labels.get(nodeId) ?? `node ${shortNodeId(nodeId)}`;
}
