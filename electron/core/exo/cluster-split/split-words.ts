/** The words of a split: one sentence for the event, the warning's title and the diagnosis. */
import type { ExoEventNode } from '../../../../shared/exo-cluster-events';
import type { ClusterChange } from '../cluster-events/diff-cluster-states';
import type { ExoWarning } from '../attach/exo-view';

/** A Mac that left this cluster while its exo still answers, in a cluster of its own. */
export interface SplitMac {
  node: ExoEventNode;
  /** Epoch ms when exobar first found its exo answering apart. */
  at: number;
  /** How many nodes its exo sees (topology.nodes of its own state). */
  sees: number;
  /** Where it answered (an address exo published for it). */
  address: string;
}

export function splitTitle(mac: SplitMac): string {
  return `${mac.node.label} is up but no longer in this cluster: it sees ${mac.sees} node${mac.sees === 1 ? '' : 's'}`;
}

export function splitEvent(mac: SplitMac): ClusterChange {
  return {
    at: mac.at,
    kind: 'cluster_split',
    nodes: [mac.node],
    model: null,
    instanceId: null,
    cause: null,
    causeNodes: [],
    loss: true,
    summary: splitTitle(mac),
  };
}

export function splitWarning(mac: SplitMac): ExoWarning {
  const name = mac.node.label;
  return {
    code: 'exo_cluster_split',
    instanceIds: [],
    title: splitTitle(mac),
    risk:
      `exo on ${name} still answers (at ${mac.address}) but no longer sees this cluster: the Macs stopped seeing each other and each side ` +
      `elected its own master (exo #2271, #2197, #2094). Instances that spanned ${name} were deleted, and neither side can place models on the other's Macs.`,
    fix:
      `Check the network between ${name} and this cluster (cable, Thunderbolt bridge, Wi-Fi, firewall), then restart exo on ${name} so it joins again; ` +
      'place its models again once it is back.',
  };
}
