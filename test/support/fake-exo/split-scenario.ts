/**
 * A cluster split in two (exo #2271, #2197, #2094): studio-b stops seeing studio-a but
 * its exo keeps running, alone. studio-b's exo is a second fake on another 127.0.0.1
 * port over its own replica of the cluster: the same Macs while they see each other;
 * after `split()` studio-a's state drops studio-b (and the instances that spanned it)
 * while studio-b's state has only studio-b, its own master. `rejoin()` mends it.
 */
import { FakeExoCluster } from './fake-cluster';
import { startFakeExo, type FakeExo } from './fake-exo-server';

export interface StudioB {
  /** studio-b's own exo API. */
  fake: FakeExo;
  /** studio-b's node id (the same in both clusters). */
  nodeId: string;
  split(): void;
  rejoin(): void;
  close(): Promise<void>;
}

/**
 * studio-b's own exo beside the cluster `main` (which must have a node named studio-b), not
 * yet split; `listen` puts it on another loopback address at the attached exo's port, where
 * exobar looks for a Mac by default (a browser test's `exobar serve` has no port hook).
 */
export async function startStudioB(main: FakeExoCluster, name = 'studio-b', listen: { host?: string; port?: number } = {}): Promise<StudioB> {
  const node = main.node(name);
  const own = new FakeExoCluster(main.now);
  const seeAll = () => {
    own.nodes.splice(0, own.nodes.length, ...main.nodes);
    own.attachedIndex = own.nodes.indexOf(node);
  };
  seeAll();
  const fake = await startFakeExo({ cluster: own, ...listen });
  return {
    fake,
    nodeId: node.id,
    split() {
      main.splitOff(name);
      own.nodes.splice(0, own.nodes.length, node);
      own.attachedIndex = 0;
      own.event();
    },
    rejoin() {
      main.rejoin(node);
      seeAll();
      own.event();
    },
    close: () => fake.close(),
  };
}
