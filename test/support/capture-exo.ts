/**
 * Real exo captures replayed over HTTP: `/node_id` and `/state/<section>` answered from
 * a captured `GET /state` the test swaps (`show`), so the monitor reads exactly what a
 * real node sent, one capture after another. Test support only.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { listenOnLoopback } from './loopback-server';
import { FIXTURE_DIR, type Json } from './fake-exo';

/** The two-node captures (test/fixtures/exo/real/two-node/, see its README). */
export const TWO_NODE = {
  ringA: 'real/two-node/state-ring-node-a.json',
  ringB: 'real/two-node/state-ring-node-b.json',
  afterBLeft: 'real/two-node/state-node-a-after-b-left.json',
} as const;

/** Node ids and names in the two-node ring captures. */
export const RING_IDS = { studioA: '57ebbb4c198d3fb29fe0718a4abf8fe3', studioB: '710bce7a2aec93576960f071b27654e2' } as const;
/** studio-a's id in the "after" capture, which comes from another run than the ring's. */
export const AFTER_STUDIO_A = 'c12d4015992849e95b53aee607241cea';

export function readCapture(name: string): Json {
  return JSON.parse(readFileSync(`${FIXTURE_DIR}${name}`, 'utf8')) as Json;
}

/**
 * The "after studio-b left" capture as the same run as the ring captures would have
 * it: studio-a keeps its id (exo was not restarted there; the capture's other id comes
 * from a second run, its README says so).
 */
export function afterInRingRun(): Json {
  return JSON.parse(JSON.stringify(readCapture(TWO_NODE.afterBLeft)).replaceAll(AFTER_STUDIO_A, RING_IDS.studioA)) as Json;
}

/**
 * The ring capture plus the second model the "after" run had (README: "a 1-node instance
 * of exobar/tiny-llama-b ran on studio-b"), built from the captured ring instance: same
 * shapes and model card fields, the tiny-llama-b card's id, one Ready runner on studio-b.
 */
export function ringWithSecondModel(name: string = TWO_NODE.ringA): Json {
  const state = readCapture(name);
  const instances = state.instances as Record<string, Json>;
  const ring = Object.values(instances)[0]!.MlxRingInstance as Json;
  const shard = Object.values((ring.shardAssignments as Json).runnerToShard as Json)[0] as Json;
  const meta = shard.PipelineShardMetadata as Json;
  const instanceId = '0b6f3f0e-5d2a-4a8e-9f61-7c2b1de0a001';
  const runnerId = '0b6f3f0e-5d2a-4a8e-9f61-7c2b1de0a002';
  instances[instanceId] = {
    MlxRingInstance: {
      instanceId,
      shardAssignments: {
        modelId: 'exobar/tiny-llama-b',
        runnerToShard: {
          [runnerId]: {
            PipelineShardMetadata: {
              ...meta,
              modelCard: { ...(meta.modelCard as Json), modelId: 'exobar/tiny-llama-b' },
              deviceRank: 0,
              worldSize: 1,
              startLayer: 0,
              endLayer: meta.nLayers,
            },
          },
        },
        nodeToRunner: { [RING_IDS.studioB]: runnerId },
      },
      hostsByNode: { [RING_IDS.studioB]: [{ ip: '0.0.0.0', port: 49655 }] },
      ephemeralPort: 49655,
    },
  };
  (state.runners as Json)[runnerId] = { RunnerReady: { prefillServerPort: null } };
  return state;
}

export interface CaptureExo {
  url: string;
  /** Answers this state (and this node id for /node_id) from now on. */
  show(state: Json, nodeId: string): void;
  close(): Promise<void>;
}

/** Serves captured states on 127.0.0.1. */
export async function startCaptureExo(state: Json, nodeId: string): Promise<CaptureExo> {
  let current = { state, nodeId };
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    let body: unknown;
    if (path === '/node_id') body = current.nodeId;
    else if (path === '/state') body = current.state;
    else if (path.startsWith('/state/')) body = current.state[path.slice('/state/'.length)];
    if (body === undefined) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `unable to find path '${path}' in state json`, type: 'Not Found', param: null, code: 404 } }));
      return;
    }
    const text = JSON.stringify(body);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
  const { url, close } = await listenOnLoopback(server);
  return {
    url,
    show(next, id) {
      current = { state: next, nodeId: id };
    },
    close,
  };
}
