/**
 * A snapshot with traffic proxied through exobar to exo, taken from the real core
 * (startCore attached to the serving fake exo, blocking worker): one 3B request done
 * (a TTFT sample), a long 3B prompt prefilling (about 2.5 s) and seen in exo's task list,
 * a second 3B request held by exobar behind it. View tests render it; nothing hand-written.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Snapshot } from '../../../shared/snapshot';
import { LLAMA_3B } from './scenarios';
import { streamChatText } from './stream-chat';
import { startServingExo } from './worker/serving-exo';
import { eventually } from '../eventually';

const stream = (url: string, tokens: number, salt: string) => streamChatText(url, LLAMA_3B, tokens, salt);

/** The snapshot mid-prefill with a request held by exobar (a second or two). */
export async function proxiedSnapshot(): Promise<Snapshot> {
  // The core is loaded here, not at the top: the fake exo's entry module exports this
  // builder, and what only imports the fake (the `exo` command, the bench) must not load the core.
  const [{ startCore }, { default: pino }] = await Promise.all([import('../../../electron/core/start-core'), import('pino')]);
  const exo = await startServingExo({ mode: 'blocking', timeScale: 0.1 });
  // startCore itself, not the API rig: its openai client refuses to load in the page tests' jsdom.
  const dataDir = mkdtempSync(join(tmpdir(), 'exobar-proxied-'));
  const rig = await startCore({
    dataDir,
    port: 0,
    rendererDir: null,
    logger: pino({ level: 'silent' }),
    exoUrl: exo.url,
    exo: { offerUrl: null, exoLogDir: null },
  });
  try {
    const exoCard = () => rig.node.snapshot().instances.find((i) => i.model === LLAMA_3B);
    await eventually(exoCard, 10_000, 'the exo instance');
    await stream(rig.url, 5000, 'first');
    await eventually(() => exoCard()?.ttft.latest, 5000, 'a TTFT sample');
    const long = stream(rig.url, 40_000, 'long');
    await eventually(() => (exoCard()?.prefill?.processedTokens ?? 0) > 0, 10_000, 'the long prefill');
    const held = stream(rig.url, 100, 'held');
    const snapshot = await eventually(
      () => {
        const s = rig.node.snapshot();
        const card = s.instances.find((i) => i.model === LLAMA_3B);
        // exo's own task list comes from its state, polled apart from the proxy's events:
        // the long request's task must be in it too (in the runner, sent through exobar).
        const taskSeen = card?.source === 'exo' && card.exo.tasks.some((t) => t.place === 'in_runner' && t.observed);
        return card?.prefill && taskSeen && card.queue.requests.some((r) => r.phase === 'queued') ? s : null;
      },
      5000,
      'the held request',
    );
    await Promise.all([long, held]);
    return snapshot;
  } finally {
    await rig.stop();
    await exo.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
