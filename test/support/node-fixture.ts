/**
 * A node with real sim-runner processes for tests: a temporary data directory, the
 * instances created and ready, and a cleanup that stops every runner and fails when a
 * runner's state table refused a transition.
 */
import { DEFAULT_PREFILL_CHUNK_MS } from '../../shared/runner-protocol';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNode, type NodeInternals } from '../../electron/core/node/node';
import type { NodeOptions, RequestEvent, RequestHandle, SubmitRequest } from '../../electron/core/node/node-types';
import type { InstanceType } from '../../shared/snapshot';

export type TestNode = ReturnType<typeof createNode>;

export interface NodeFixture {
  node: TestNode;
  dataDir: string;
  /** Creates an instance and waits until its runner is ready; returns its id. */
  launch(model: string, instanceType?: InstanceType): Promise<string>;
  cleanup(): Promise<void>;
}

/** The runner settings of a node that reproduces exo: its schedule, no prompt cache. */
export const EXO_SCHEDULE_NO_CACHE = { schedule: 'exo', prefillChunkMs: DEFAULT_PREFILL_CHUNK_MS, promptCacheBytes: 0 } as const;

export function createNodeFixture(options: Partial<NodeOptions> = {}, internals: NodeInternals = {}): NodeFixture {
  const dataDir = mkdtempSync(join(tmpdir(), 'exobar-test-'));
  // exo's schedule without a prompt cache: the node's tests pin exo's semantics (an ack
  // that waits for a running prefill, a cancel held until it); a test may ask for another.
  const node = createNode({ dataDir, simTimeScale: 0.1, runnerSettings: () => EXO_SCHEDULE_NO_CACHE, ...options }, internals);
  return {
    node,
    dataDir,
    async launch(model, instanceType = 'ring') {
      const instance = await node.createInstance({ model, instanceType, fastSynch: 'auto', acknowledgeRisk: false });
      await node.waitForReady(instance.id, 60_000);
      return instance.id;
    },
    async cleanup() {
      await node.shutdown();
      rmSync(dataDir, { recursive: true, force: true });
      // Every process-driven test also proves the runners' state tables refused nothing.
      const refused = node.eventLog.all().filter((e) => e.kind === 'runner_state_refused');
      if (refused.length > 0) throw new Error(`refused runner transitions: ${JSON.stringify(refused)}`);
    },
  };
}

/** A submitted request with every event it produced, and when its first token came. */
export interface TrackedRequest {
  handle: RequestHandle;
  events: RequestEvent[];
  submittedAt: number;
  firstTokenAt: number | null;
  tokens: number;
}

export function submitTracked(node: TestNode, request: SubmitRequest): TrackedRequest {
  const tracked: TrackedRequest = { handle: undefined as never, events: [], submittedAt: performance.now(), firstTokenAt: null, tokens: 0 };
  tracked.handle = node.submit(request, (event) => {
    tracked.events.push(event);
    if (event.type === 'token') {
      tracked.tokens += 1;
      tracked.firstTokenAt ??= performance.now();
    }
  });
  return tracked;
}

/** Milliseconds from submit to first token. */
export function ttftMs(tracked: TrackedRequest): number {
  if (tracked.firstTokenAt === null) throw new Error(`request ${tracked.handle.id} produced no token`);
  return tracked.firstTokenAt - tracked.submittedAt;
}
