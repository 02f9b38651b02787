/**
 * The fake exo's HTTP API. Built in: the few routes readiness needs (`/node_id`,
 * `/state`, `/state/topology/nodes`, `/state/nodeMemory/<id>`), with exo's shapes.
 * A richer fake (test/support/fake-exo/) can be mounted instead: point
 * FAKE_EXO_API_MODULE at a module exporting {@link CreateExoApiHandler} as
 * `createExoApiHandler`; it gets the same context (this exo's node id and port).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** What a mounted API learns of the fake exo process serving it. */
export interface FakeExoApiContext {
  nodeId: string;
  apiPort: number;
  /** The pids of the runner children alive now. */
  runnerPids(): number[];
}

export type ExoApiHandler = (req: IncomingMessage, res: ServerResponse) => void;
export type CreateExoApiHandler = (context: FakeExoApiContext) => ExoApiHandler | Promise<ExoApiHandler>;

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'access-control-allow-origin': '*' });
  res.end(JSON.stringify(body));
}

/** A one-Mac State as exo 0.3.70 serializes it (camelCase, every top-level key). */
export function minimalState(nodeId: string): Record<string, unknown> {
  const gib = 1024 ** 3;
  return {
    instances: {},
    runners: {},
    downloads: {},
    tasks: {},
    lastSeen: { [nodeId]: new Date().toISOString() },
    topology: { nodes: [nodeId], connections: {} },
    lastEventAppliedIdx: 0,
    nodeIdentities: { [nodeId]: { modelId: 'Mac Studio', chipId: 'Apple M3 Ultra', friendlyName: 'fake-exo', osVersion: '26.3', osBuildVersion: '25D125' } },
    nodeMemory: {
      [nodeId]: { ramTotal: { inBytes: 64 * gib }, ramAvailable: { inBytes: 48 * gib }, swapTotal: { inBytes: 0 }, swapAvailable: { inBytes: 0 } },
    },
    nodeDisk: {},
    nodeSystem: {},
    nodeNetwork: {},
    nodeThunderbolt: {},
    nodeThunderboltBridge: {},
    nodeRdmaCtl: {},
    nodeBackends: {},
    thunderboltBridgeCycles: [],
    instanceLinks: {},
    prefillServerPorts: {},
    customModelCards: {},
  };
}

/** The built-in API: GET `/node_id`, `/state` and `/state/<path>` (exo's 404 body for a missing path). */
export function createMinimalExoApi(context: FakeExoApiContext): ExoApiHandler {
  return (req, res) => {
    const path = new URL(req.url ?? '/', 'http://fake-exo').pathname;
    if (req.method !== 'GET') return send(res, 405, { detail: 'Method Not Allowed' });
    if (path === '/node_id') return send(res, 200, context.nodeId);
    if (path === '/state') return send(res, 200, minimalState(context.nodeId));
    if (path.startsWith('/state/')) {
      const keys = path
        .slice('/state/'.length)
        .split('/')
        .filter((k) => k !== '');
      let node: unknown = minimalState(context.nodeId);
      for (const key of keys) {
        node = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[Array.isArray(node) ? Number(key) : key] : undefined;
        if (node === undefined) {
          return send(res, 404, { error: { message: `unable to find path '${keys.join('.')}' in state json`, type: 'Not Found', param: null, code: 404 } });
        }
      }
      return send(res, 200, node);
    }
    return send(res, 404, { detail: 'Not Found' });
  };
}
