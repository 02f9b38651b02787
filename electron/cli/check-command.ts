/**
 * `exobar check sharing`: the GPU sharing check from the command line. Beside a running
 * exobar of the same data directory (its record, server-client.ts) the check runs in
 * that exobar, through its control API (check-through-server.ts), or is refused in
 * words. With none running there, starts exobar's core in this process (its own
 * supervisor, a free port, the data directory's models and MLX runtime), runs the check
 * and stops every runner it started. Either way it prints the markdown report (or the
 * result with --json) and keeps both in <data-dir>/checks/.
 */
import { createInterface } from 'node:readline/promises';
import { z } from 'zod';
import { CHECK_EXPERIMENTS, SharingCheckRequestSchema, type CheckStatus } from '../../shared/sharing-check';
import { FAST_SYNCH_RISK } from '../core/checks/throughput-experiment';
import { resolveDataDir } from '../core/data-dir';
import { startCore } from '../core/start-core';
import { checksDir } from '../core/checks/check-store';
import { liveRegistryOwner } from '../core/supervisor/runner-registry';
import { findServer } from './server-client';
import { checkThroughServer, reportCheckEnd } from './check-through-server';
import { createTerminalLogger } from '../core/terminal-log';
import { flagValue, parseFlags, UsageError, type CliCommand } from './cli-command';

const USAGE = `usage: exobar check sharing [--models A,B] [--prompt-tokens N] [--streams K] [--seconds S]
                            [--fast-synch-compare] [--baseline] [--exo URL] [--json] [--data-dir D]

Measures how two models share this Mac's GPU, through exobar's own supervisor:
  1. B's time to first token alone, while A prefills a long prompt, and with a second
     A request queued (exo's published 0.23 / 0.38-0.40 / 15.1-15.7 / 0.34-0.42 s);
  2. B's decode (ITL p50/p95, tokens/s) before, during and after A's prefill;
  3. K streaming clients per model for S seconds: requests per minute and tokens/s;
  4. B's decode with A resident and idle, then with A unloaded (and A brought back).
On an attached exo (both models placed there, or none running locally and two on exo)
the requests go through exobar's own /v1/chat/completions, which proxies them to exo,
and experiments 1 and 2 run with exobar's hold (setting exo.hold) on, then off.
Models it launches it stops again; instances are left as they were. When an exobar
already serves the data directory, the check runs in it (as the page's "Check GPU
sharing" does), on the models it runs; when that exobar cannot be asked (no token, a
refused one, not answering, a check already running) the command refuses (exit 1)
rather than start its own copies of the models beside it.

  --models A,B          A prefills, B is measured (default: the two running models, else the sim pair)
  --prompt-tokens N     A's long prompt (default 30000, capped by A's context)
  --streams K           streaming clients per model in experiment 3 (default 8)
  --seconds S           seconds of experiment 3 (default 60)
  --decode-tokens N     B's tokens before and after A's prefill in experiment 2 (default 64)
  --experiments LIST    ttft,decode,throughput,idle_neighbour (default all)
  --exo URL             attach to this exo for the check (default: the setting exo.url; only when no exobar serves D)
  --fast-synch-compare  experiment 3 again with fast synch on: Apple silicon only, asks for consent
  --baseline            experiment 1 through the blocking dispatch too
  --json                print the result as JSON (the report is kept either way)
  --sim-time-scale F    multiply the sim runners' durations (tests; only when no exobar serves D)
  --data-dir D          the data directory (default ~/.exobar or $EXOBAR_DATA_DIR)
  -h, --help            show this help`;

const Int = (what: string) => z.string().regex(/^\d+$/, `expected a whole number of ${what}`).transform(Number);

async function askConsent(io: Parameters<CliCommand['run']>[1]): Promise<boolean> {
  if (!process.stdin.isTTY) {
    io.err(`exobar check sharing: fast synch comparison refused (no terminal to ask). ${FAST_SYNCH_RISK}`);
    return false;
  }
  io.err(FAST_SYNCH_RISK);
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return (await rl.question('Run the fast synch comparison anyway? Type "yes": ')).trim().toLowerCase() === 'yes';
  } finally {
    rl.close();
  }
}

/** How long a fresh core waits for an attached exo's first answer before choosing the check's models. */
const EXO_FIRST_READING_MS = 10_000;

/** With an exo attached, waits for its first reading, so the check sees exo's instances (bounded: an exo that does not answer leaves a local check). */
async function firstExoReading(node: { snapshot(): { exo: { lastGoodPollAt: number | null; lastError: unknown } | null } }): Promise<void> {
  const deadline = Date.now() + EXO_FIRST_READING_MS;
  for (;;) {
    const exo = node.snapshot().exo;
    if (!exo || exo.lastGoodPollAt !== null || exo.lastError !== null || Date.now() > deadline) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export const checkCommand: CliCommand = {
  name: 'check',
  summary: 'check sharing: measure how two models share the GPU (exobar check sharing --help)',
  usage: USAGE,
  async run(argv, io) {
    const [what, ...rest] = argv;
    if (what === '--help' || what === '-h') {
      io.out(USAGE);
      return 0;
    }
    if (what !== 'sharing') throw new UsageError(what === undefined ? 'which check? (sharing)' : `unknown check "${what}"`);
    const flags = parseFlags(rest, {
      models: { type: 'string' },
      'prompt-tokens': { type: 'string' },
      streams: { type: 'string' },
      seconds: { type: 'string' },
      'decode-tokens': { type: 'string' },
      experiments: { type: 'string' },
      'fast-synch-compare': { type: 'boolean' },
      baseline: { type: 'boolean' },
      json: { type: 'boolean' },
      'sim-time-scale': { type: 'string' },
      exo: { type: 'string' },
      'data-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    });
    if (flags.help) {
      io.out(USAGE);
      return 0;
    }
    const models =
      flags.models === undefined ? undefined : flagValue('models', z.string().regex(/^[^,]+,[^,]+$/, 'expected two models, A,B'), flags.models).split(',');
    const request = {
      models: models as [string, string] | undefined,
      promptTokens: flags['prompt-tokens'] === undefined ? undefined : flagValue('prompt-tokens', Int('tokens'), flags['prompt-tokens']),
      streams: flags.streams === undefined ? undefined : flagValue('streams', Int('clients'), flags.streams),
      seconds: flags.seconds === undefined ? undefined : flagValue('seconds', Int('seconds'), flags.seconds),
      decodeTokens: flags['decode-tokens'] === undefined ? undefined : flagValue('decode-tokens', Int('tokens'), flags['decode-tokens']),
      experiments: flags.experiments?.split(',') as Array<(typeof CHECK_EXPERIMENTS)[number]> | undefined,
      fastSynchCompare: flags['fast-synch-compare'] ?? false,
      baseline: flags.baseline ?? false,
      consent: false,
    };
    const parsed = SharingCheckRequestSchema.safeParse(request);
    if (!parsed.success) throw new UsageError(z.prettifyError(parsed.error));
    if (parsed.data.fastSynchCompare) parsed.data.consent = await askConsent(io);
    const simTimeScale = flags['sim-time-scale'] === undefined ? undefined : flagValue('sim-time-scale', z.coerce.number().positive(), flags['sim-time-scale']);
    const dataDir = resolveDataDir(flags['data-dir'] ?? null, io.env);
    const running = await findServer(dataDir, null, io.env);
    if (running.found) {
      if (simTimeScale !== undefined) io.err(`exobar check sharing: --sim-time-scale ignored: the check runs in ${running.server.source}, at its own time scale`);
      if (flags.exo !== undefined) io.err(`exobar check sharing: --exo ignored: the check runs in ${running.server.source}, on the exo it is attached to`);
      return checkThroughServer(running.server, parsed.data, { json: flags.json === true, dataDir, checksDir: checksDir(dataDir) }, io);
    }
    // No server recorded, yet an exobar that runs owns the data directory's runners (one
    // starting, or one that could not write its record): its models are not ours to copy.
    const owner = await liveRegistryOwner(dataDir);
    if (owner) {
      io.err(
        `exobar check sharing: refused: exobar pid ${owner.pid} runs the models of ${dataDir} but has recorded no address to ask ` +
          `(${running.reason}); run the check from its page, or stop it and try again.`,
      );
      return 1;
    }
    const logger = createTerminalLogger({ level: 'warn', format: 'json' });
    const core = await startCore({ dataDir, port: 0, simTimeScale, logger, ...(flags.exo !== undefined ? { exoUrl: flags.exo } : {}) });
    let status: CheckStatus | null = null;
    const onSignal = () => {
      if (status) void core.checks.cancel(status.id);
    };
    process.on('SIGINT', onSignal);
    try {
      await core.mlx.refresh().catch(() => undefined);
      await firstExoReading(core.node);
      status = core.checks.start(parsed.data);
      let lastStep = '';
      const ticker = setInterval(() => {
        const now = core.checks.get(status!.id);
        if (now && now.step !== lastStep) {
          lastStep = now.step;
          io.err(`[${Math.round(now.progress * 100)} %] ${now.step}`);
        }
      }, 250);
      const end = await core.checks.wait(status.id);
      clearInterval(ticker);
      return reportCheckEnd(end, flags.json === true, core.checks.dir, io);
    } finally {
      process.off('SIGINT', onSignal);
      await core.stop();
    }
  },
};
