/**
 * The fake exo as the two-node capture had it (test/fixtures/exo/real/two-node/):
 * studio-a (the node exobar attaches to) and studio-b, a 2-node ring of
 * exobar/tiny-llama across both and a 1-node exobar/tiny-llama-b on studio-b, all
 * Ready. `stopNode('studio-b')` then removes studio-b, both instances and their
 * runners about 12 s later, as exo did.
 */
import { FakeExoCluster } from './fake-cluster';

export const TINY = 'exobar/tiny-llama';
export const TINY_B = 'exobar/tiny-llama-b';

/** The two-node cluster on the given clock. */
export function twoNodeCluster(now: () => number = Date.now): FakeExoCluster {
  const cluster = new FakeExoCluster(now);
  cluster.addNode({ name: 'studio-a', chip: 'Apple M3 Ultra', model: 'Mac Studio', ramGb: 96 });
  cluster.addNode({ name: 'studio-b', chip: 'Apple M3 Ultra', model: 'Mac Studio', ramGb: 96 });
  cluster.addInstance({ model: TINY, nodes: ['studio-a', 'studio-b'], ready: true });
  cluster.addInstance({ model: TINY_B, nodes: ['studio-b'], ready: true });
  return cluster;
}
