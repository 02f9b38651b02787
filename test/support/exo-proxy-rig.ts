/**
 * The rig of the proxy tests: the serving fake exo (real HTTP), the exo client polling
 * it, and the real exobar core with the proxy routes, reached with the official
 * `openai` client.
 */
import OpenAI from 'openai';
import { startCoreRig, type CoreRig } from './api-harness';
import { startServingExo, type ServingExo, type ServingExoOptions } from './fake-exo';
import { ExoClient } from '../../electron/core/exo/attach/exo-client';
import { createExoServing, type ExoServing, type ExoServingOptions } from '../../electron/core/exo/proxy/exo-serving';
import { sleep } from './eventually';

export interface ProxyRig {
  exo: ServingExo;
  client: ExoClient;
  serving: ExoServing;
  rig: CoreRig;
  openai: OpenAI;
  /** The hold setting the proxy reads. */
  hold: { enabled: boolean };
  close(): Promise<void>;
}

export interface ProxyRigOptions extends ServingExoOptions, Partial<Pick<ExoServingOptions, 'idleTimeoutMs'>> {
  /** Puts something between exobar and the fake exo (e.g. a proxy that holds answers); exobar reaches exo at the URL it returns. */
  between?: (exoUrl: string) => Promise<{ url: string; close(): Promise<void> }>;
}

export async function startProxyRig(options: ProxyRigOptions = {}): Promise<ProxyRig> {
  const exo = await startServingExo({ timeScale: 0.1, ...options });
  const middle = options.between ? await options.between(exo.url) : null;
  const hold = { enabled: true };
  let serving: ExoServing | null = null;
  const client = new ExoClient({ url: middle?.url ?? exo.url, fastIntervalMs: 50, onUpdate: () => serving?.traffic.reconcile() });
  serving = createExoServing({ source: () => client, holdEnabled: () => hold.enabled, idleTimeoutMs: options.idleTimeoutMs });
  client.start();
  const created = serving;
  const rig = await startCoreRig({ extraRoutes: () => created.routes });
  // The first poll must have landed before exobar knows which models are exo's.
  for (let i = 0; i < 200 && !client.reading.instances; i++) await sleep(10);
  return {
    exo,
    client,
    serving,
    rig,
    openai: new OpenAI({ baseURL: `${rig.url}/v1`, apiKey: 'unused', maxRetries: 0 }),
    hold,
    async close() {
      await rig.close();
      await client.stop();
      await middle?.close();
      await exo.close();
    },
  };
}
