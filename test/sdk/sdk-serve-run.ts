/**
 * One run of test/sdk/sdk-clients.py against an `exobar serve`, and the checks both
 * official-SDK tests (sim models, real MLX) make of it: every call the script made by id
 * is in the request log under its dialect (`api`), done, with a TTFT, and `/metrics`
 * counts every dialect by its `api` label.
 */
import { join } from 'node:path';
import { expect } from 'vitest';
import type { RequestRecord } from '../../shared/request-record';
import { eventually } from '../support/eventually';
import type { ServeProcess } from '../support/e2e/serve-process';
import { run, sdkPython } from './sdk-venv';

/** One line the script printed: the dialect, the answer's id when it has one, what it checked. */
export interface SdkCall {
  api: string;
  id?: string;
  parsed?: unknown;
}

/** The dialects the script speaks, as the request log and `/metrics` name them. */
export const SDK_DIALECTS = ['anthropic-messages', 'openai-responses', 'openai-chat', 'openai-completions', 'ollama-chat'];

/** Runs the script (`mode` sim or mlx) and returns its lines; a failed check fails with the script's and the server's output. */
export async function runSdkClients(serve: ServeProcess, model: string, mode: 'sim' | 'mlx'): Promise<SdkCall[]> {
  const { stdout } = await run(sdkPython, [join(__dirname, 'sdk-clients.py'), serve.url, model, mode], { timeout: 600_000 }).catch(
    (error: { stdout?: string; stderr?: string }) => {
      throw new Error(`sdk-clients.py ${mode} failed:\n${error.stderr ?? ''}\n${error.stdout ?? ''}\n${serve.output().slice(-2000)}`);
    },
  );
  return stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as SdkCall);
}

/** Every call is logged with its `api`, outcome done and a TTFT; every dialect is counted in `/metrics`. */
export async function expectLoggedAndCounted(serve: ServeProcess, model: string, said: SdkCall[]): Promise<void> {
  const control = async (path: string): Promise<Response> => fetch(`${serve.url}${path}`, { headers: { Authorization: `Bearer ${serve.token}` } });
  const records = await eventually(async () => {
    const body = (await (await control('/api/requests?limit=100')).json()) as { requests: RequestRecord[] };
    for (const api of SDK_DIALECTS) expect(body.requests.some((r) => r.api === api && r.model === model)).toBe(true);
    return body.requests;
  });
  for (const s of said.filter((x) => x.id)) {
    const record = records.find((r) => r.id === s.id);
    expect(record, s.id).toMatchObject({ api: s.api, outcome: 'done', model });
    expect(record!.ttftMs).toBeGreaterThan(0);
  }
  const metrics = await (await control('/metrics')).text();
  for (const api of SDK_DIALECTS) expect(metrics).toMatch(new RegExp(`exobar_requests_total\\{[^}]*api="${api}"[^}]*outcome="done"`));
  for (const api of SDK_DIALECTS) expect(metrics).toMatch(new RegExp(`exobar_ttft_seconds_count\\{[^}]*api="${api}"`));
}
