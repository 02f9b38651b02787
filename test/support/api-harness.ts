/**
 * API test rigs: the real core (node with sim runners + API server on port 0) or the
 * API server over a {@link FakeNode}, with the official OpenAI client and a small
 * control-API helper.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll } from 'vitest';
import pino from 'pino';
import { createApiServer, type ApiServerOptions } from '../../electron/core/api/api-server';
import { startCore, type RunningCore, type StartCoreOptions } from '../../electron/core/start-core';
import type { ExobarNode } from '../../electron/core/node/node-types';
import type { InstanceType } from '../../shared/snapshot';

export const TEST_TOKEN = 'test-token-0123456789abcdef';

export interface ApiRig {
  url: string;
  token: string;
  node: ExobarNode;
  client: OpenAI;
  /** A control-API call with the token (unless `headers.Authorization` is given). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON answers
  control(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }>;
  close(): Promise<void>;
}

function rigFrom(url: string, token: string, node: ExobarNode, close: () => Promise<void>): ApiRig {
  return {
    url,
    token,
    node,
    // maxRetries 0: a test must see the first answer, not the client's retry of it.
    client: new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 }),
    async control(method, path, body, headers = {}) {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        // not JSON: keep the text
      }
      return { status: response.status, body: parsed, headers: response.headers };
    },
    close,
  };
}

export interface CoreRig extends ApiRig {
  core: RunningCore;
  /** Creates an instance through the API and waits until its runner is ready; returns its id. */
  launch(model: string, instanceType?: InstanceType): Promise<string>;
}

/** The real core on port 0 with sim runners at `simTimeScale` (default 0.1). */
export async function startCoreRig(options: Partial<StartCoreOptions> = {}): Promise<CoreRig> {
  const dataDir = mkdtempSync(join(tmpdir(), 'exobar-api-test-'));
  // No look for an exo on this Mac's default port (another program's): tests that want the offer set exo.offerUrl.
  const core = await startCore({
    dataDir,
    port: 0,
    simTimeScale: 0.1,
    rendererDir: null,
    logger: pino({ level: 'silent' }),
    exo: { offerUrl: null, exoLogDir: null },
    ...options,
  });
  const rig = rigFrom(core.url, core.token, core.node, async () => {
    await core.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return {
    ...rig,
    core,
    async launch(model, instanceType = 'ring') {
      const created = await rig.control('POST', '/api/instances?wait=ready', { model, instanceType });
      if (created.status !== 201) throw new Error(`launch of ${model} answered ${created.status}: ${JSON.stringify(created.body)}`);
      return created.body.id as string;
    },
  };
}

/**
 * A {@link startCoreRig} for a whole test file, started before its tests with `models`
 * launched and closed after them; read the rig through the returned function.
 */
export function useCoreRig(models: string[], options: Partial<StartCoreOptions> = {}): () => CoreRig {
  let rig: CoreRig | undefined;
  beforeAll(async () => {
    rig = await startCoreRig(options);
    for (const model of models) await rig.launch(model);
  });
  afterAll(async () => {
    await rig?.close();
  });
  return () => {
    if (!rig) throw new Error('the core rig is not started yet');
    return rig;
  };
}

/** The API server alone over any node (a FakeNode for scripted cases), port 0. */
export async function startServerRig(node: ExobarNode, options: Partial<ApiServerOptions> = {}): Promise<ApiRig> {
  const server = createApiServer({ node, token: TEST_TOKEN, host: '127.0.0.1', port: 0, rendererDir: null, ...options });
  const { url } = await server.listen();
  return rigFrom(url, TEST_TOKEN, node, () => server.close());
}

/** Reads a whole SSE response as raw lines (comments included), for what OpenAI clients skip. */
export async function readRawSse(response: Response): Promise<string[]> {
  const text = await response.text();
  return text.split('\n').filter((line) => line !== '');
}
