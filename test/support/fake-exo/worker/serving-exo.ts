/**
 * A fake exo that serves chat completions: the fake exo server with a worker of the
 * chosen mode and the chat and placement routes, over a cluster (by default the
 * measured stall's: Llama-3.2-1B and Llama-3.2-3B ready on one Mac).
 */
import { FakeExoCluster } from '../fake-cluster';
import { startFakeExo, type FakeExo, type FakeExoHandler } from '../fake-exo-server';
import { LLAMA_1B, LLAMA_3B } from '../scenarios';
import { fakeChatRoutes, type ChatRoutes } from './chat-routes';
import { FakeExoWorker, type WorkerMode } from './fake-worker';
import { fakePlacementRoutes, type PlacementRoutes } from './placement-routes';

export interface ServingExo extends FakeExo {
  worker: FakeExoWorker;
  chat: ChatRoutes;
  placement: PlacementRoutes;
}

export interface ServingExoOptions {
  mode?: WorkerMode;
  timeScale?: number;
  cluster?: FakeExoCluster;
  port?: number;
  /** Milliseconds per loading step of a newly placed instance (default 20). */
  loadStepMs?: number;
}

/** One Mac ("studio-a", 96 GB) with the 1B and the 3B ready: the measured stall's setup. */
export function stallCluster(): FakeExoCluster {
  const cluster = new FakeExoCluster();
  cluster.addNode({ name: 'studio-a', chip: 'Apple M3 Ultra', model: 'Mac Studio', ramGb: 96 });
  cluster.addInstance({ model: LLAMA_1B, nodes: ['studio-a'], ready: true });
  cluster.addInstance({ model: LLAMA_3B, nodes: ['studio-a'], ready: true });
  return cluster;
}

/** Starts the serving fake exo on 127.0.0.1. */
export async function startServingExo(options: ServingExoOptions = {}): Promise<ServingExo> {
  const cluster = options.cluster ?? stallCluster();
  const worker = new FakeExoWorker(cluster, { mode: options.mode ?? 'blocking', timeScale: options.timeScale ?? 1 });
  const chat = fakeChatRoutes(worker);
  const placement = fakePlacementRoutes(cluster, { loadStepMs: options.loadStepMs ?? 20 });
  const handlers: FakeExoHandler[] = [chat.handler, placement.handler];
  const fake = await startFakeExo({ cluster, port: options.port, handlers });
  const close = fake.close;
  return Object.assign(fake, {
    worker,
    chat,
    placement,
    close: async () => {
      placement.stop();
      await close();
    },
  });
}
