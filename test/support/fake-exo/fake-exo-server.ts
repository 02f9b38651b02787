/**
 * The fake exo: an HTTP server on 127.0.0.1 answering exo's routes with exo's shapes
 * (exo 0.3.70, src/exo/api/main.py), over a FakeExoCluster the test moves through time, with
 * faults to inject. Test support only: never part of the app.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeExoCluster } from './fake-cluster';
import { answerWithFault, type Fault, type FaultKind } from './faults';
import { renderState, snakeCaseKeys, type RenderOptions } from './render-state';
import { randomUUID } from 'node:crypto';
import { modelCard, type Json } from './fixture-data';
import { fakeDownloadEntries } from './fake-downloads';

/**
 * A further route of the fake exo (chat completions, placement): answers and returns
 * true, or returns false to let the built-in routes answer. Tried after faults.
 */
export type FakeExoHandler = (req: IncomingMessage, res: ServerResponse, url: URL, body: Buffer) => boolean;

export interface FakeExoOptions {
  cluster?: FakeExoCluster;
  /** Further routes, tried in order before the built-in ones. */
  handlers?: FakeExoHandler[];
  /** 0 (the default) picks a free port. */
  port?: number;
  /** The loopback address it listens on (default 127.0.0.1); another, such as 127.0.0.2, is a second Mac on the same port. */
  host?: string;
}

/** Ways a future or different exo may say the same things. */
export interface FakeExoVariant {
  /** Field names in snake_case below the top level (as model_dump_json() writes them). */
  snakeCase: boolean;
  /** Tags exo 0.3.70 does not have: the first runner "RunnerParked", plus a task of an unknown kind. */
  unknownTags: boolean;
}

export interface FakeExo {
  url: string;
  port: number;
  cluster: FakeExoCluster;
  variant: FakeExoVariant;
  /** Requests seen, by path (query string left out). */
  hits: Map<string, number>;
  /** TCP connections accepted so far (keep-alive clients open few). */
  readonly connections: number;
  /** Answers the next `times` requests under `path` (all paths by default) with the fault. */
  inject(kind: FaultKind, options?: { path?: string; times?: number }): void;
  clearFaults(): void;
  /** Stops listening: new connections are refused (open ones are closed). */
  refuse(): Promise<void>;
  /** Listens again on the same port. */
  accept(): Promise<void>;
  close(): Promise<void>;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'access-control-allow-origin': '*' });
  res.end(text);
}

/** exo's HTTPException body (exo 0.3.70, src/exo/api/main.py). */
function sendError(res: ServerResponse, status: number, phrase: string, message: string): void {
  sendJson(res, status, { error: { message, type: phrase, param: null, code: status } });
}

/** Walks `/state/{path}` like exo: camelCase keys or list indexes, 404 naming the dotted path. */
function walk(state: unknown, segments: string[]): { found: true; value: unknown } | { found: false } {
  let here: unknown = state;
  for (const segment of segments) {
    if (Array.isArray(here) && /^\d+$/.test(segment) && Number(segment) < here.length) here = here[Number(segment)];
    else if (here !== null && typeof here === 'object' && !Array.isArray(here) && Object.hasOwn(here, segment)) here = (here as Json)[segment];
    else return { found: false };
  }
  return { found: true, value: here };
}

function withUnknownTags(state: Json): Json {
  const runners = state.runners as Json;
  const firstRunner = Object.keys(runners)[0];
  if (firstRunner) runners[firstRunner] = { RunnerParked: { parkedFor: 'memory pressure' } };
  const first = Object.keys(state.instances as Json)[0] ?? null;
  (state.tasks as Json)['00000000-0000-4000-8000-00000000feed'] = {
    SpeculativeDecode: { taskId: '00000000-0000-4000-8000-00000000feed', taskStatus: 'Pending', instanceId: first },
  };
  return state;
}

/** Starts the fake exo on 127.0.0.1. */
export async function startFakeExo(options: FakeExoOptions = {}): Promise<FakeExo> {
  const cluster = options.cluster ?? new FakeExoCluster();
  const variant: FakeExoVariant = { snakeCase: false, unknownTags: false };
  const hits = new Map<string, number>();
  let faults: Fault[] = [];

  const state = (render: RenderOptions): Json => {
    let out = renderState(cluster, render);
    if (variant.unknownTags) out = withUnknownTags(out);
    return variant.snakeCase ? (snakeCaseKeys(out) as Json) : out;
  };

  const takeFault = (path: string): FaultKind | null => {
    const fault = faults.find((f) => f.remaining > 0 && (!f.path || path.startsWith(f.path)));
    if (!fault) return null;
    fault.remaining--;
    return fault.kind;
  };

  const route = (req: IncomingMessage, res: ServerResponse, body: Buffer): void => {
    const url = new URL(req.url ?? '/', 'http://fake-exo');
    const path = url.pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const fault = takeFault(path);
    if (fault) {
      answerWithFault(fault, res);
      return;
    }
    for (const handler of options.handlers ?? []) if (handler(req, res, url, body)) return;
    const method = req.method ?? 'GET';
    if (method === 'GET' && path === '/node_id') return sendJson(res, 200, cluster.nodeId);
    if (method === 'GET' && path === '/state') return sendJson(res, 200, state({ isoStyle: 'z' }));
    if (method === 'GET' && path.startsWith('/state/')) {
      // Like exo: the whole State is dumped for every path (main.py:414-427).
      const segments = path.slice('/state/'.length).split('/').filter(Boolean).map(decodeURIComponent);
      const found = walk(state({ isoStyle: 'python' }), segments);
      if (!found.found) return sendError(res, 404, 'Not Found', `unable to find path '${segments.join('.')}' in state json`);
      return sendJson(res, 200, found.value);
    }
    if (method === 'GET' && (path === '/models' || path === '/v1/models')) return sendJson(res, 200, modelList(cluster, url.searchParams.get('status')));
    const instanceMatch = /^\/instance\/([^/]+)$/.exec(path);
    if (instanceMatch && instanceMatch[1] !== 'placement' && instanceMatch[1] !== 'previews' && instanceMatch[1] !== 'await') {
      const instance = cluster.instances.get(decodeURIComponent(instanceMatch[1]!));
      if (!instance) return sendError(res, 404, 'Not Found', `Instance ${instanceMatch[1]} not found`);
      if (method === 'GET') return sendJson(res, 200, cluster.instanceJson(instance));
      if (method === 'DELETE') {
        cluster.deleteInstance(instance.id);
        return sendJson(res, 200, { message: 'Command received.', command_id: randomUUID(), instance_id: instance.id });
      }
    }
    if (method === 'GET' && path === '/events') return sendJson(res, 200, []);
    // FastAPI's answer for a route it does not have.
    sendJson(res, 404, { detail: 'Not Found' });
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => route(req, res, Buffer.concat(chunks)));
  });
  server.keepAliveTimeout = 5_000;
  let connections = 0;
  server.on('connection', () => connections++);
  let port = options.port ?? 0;
  const host = options.host ?? '127.0.0.1';
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        port = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (!server.listening) return resolve();
      server.close(() => resolve());
      server.closeAllConnections();
    });
  await listen();

  return {
    get url() {
      return `http://${host}:${port}`;
    },
    get port() {
      return port;
    },
    get connections() {
      return connections;
    },
    cluster,
    variant,
    hits,
    inject(kind, injectOptions = {}) {
      faults.push({ kind, path: injectOptions.path, remaining: injectOptions.times ?? Infinity });
    },
    clearFaults() {
      faults = [];
    },
    refuse: stop,
    accept: listen,
    close: stop,
  };
}

/** GET /models: ModelListModel entries (snake_case, api/types/api.py:32-56). */
function modelList(cluster: FakeExoCluster, status: string | null): Json {
  const placed = new Set([...cluster.instances.values()].map((i) => i.modelId));
  // exo's "downloaded": a model with a DownloadCompleted on some Mac (a placed model's, or a download that finished).
  const completed = new Set(placed);
  for (const node of cluster.nodes)
    for (const entry of fakeDownloadEntries(cluster, node.id)) {
      const done = (entry as { DownloadCompleted?: { shardMetadata?: Record<string, { modelCard?: { modelId?: string } }> } }).DownloadCompleted;
      const model = done && Object.values(done.shardMetadata ?? {})[0]?.modelCard?.modelId;
      if (model) completed.add(model);
    }
  const ids =
    status === 'downloaded'
      ? [...completed]
      : [...new Set([...placed, 'mlx-community/Llama-3.2-1B-Instruct-4bit', 'mlx-community/Qwen3-30B-A3B-4bit', 'mlx-community/Llama-3.2-3B-Instruct-4bit'])];
  return {
    object: 'list',
    data: ids.map((id) => {
      const card = modelCard(id);
      return {
        id,
        object: 'model',
        created: 1750601131,
        owned_by: 'exo',
        hugging_face_id: id,
        name: id.split('/').pop(),
        description: '',
        context_length: card.contextLength,
        tags: [],
        storage_size_megabytes: Math.round((card.storageSize as { inBytes: number }).inBytes / 1024 / 1024),
        supports_tensor: card.supportsTensor,
        tasks: card.tasks,
        is_custom: false,
        family: card.family,
        quantization: card.quantization,
        base_model: card.baseModel,
        capabilities: card.capabilities,
        reasoning_dialect: card.reasoningDialect,
      };
    }),
  };
}
