/**
 * The runtime rows of `npm run bench`: what ships (built JavaScript) beside the
 * TypeScript sources through tsx, when tsx is installed, for contrast.
 */
import { measureRunnerStart, tsxRunnerCommand, type RunnerStartResult } from './runner-start';
import { measureServeIdle, type ServeIdleResult } from './serve-idle';

export const RUNNER_START_TRIALS = 10;
const TSX_RUNNER_TRIALS = 3;
export const SERVE_IDLE_WINDOW_MS = 10_000;

export interface RuntimeBench {
  runner_start_ms_median: number;
  /** The largest peak RSS of one runner over the trials. */
  runner_rss_mb: number;
  serve_idle_rss_mb: number;
  serve_idle_cpu_percent: number;
  runtime: {
    runner_start: { built: RunnerStartResult; tsx: RunnerStartResult | null };
    serve_idle: { built: ServeIdleResult; tsx: ServeIdleResult | null };
  };
}

export async function measureRuntime(progress: (line: string) => void): Promise<RuntimeBench> {
  const withTsx = tsxRunnerCommand() != null;
  const built = await measureRunnerStart({ trials: RUNNER_START_TRIALS, progress });
  const tsx = withTsx ? await measureRunnerStart({ trials: TSX_RUNNER_TRIALS, runtime: 'tsx', progress }) : null;
  const serve = await measureServeIdle({ windowMs: SERVE_IDLE_WINDOW_MS, progress });
  const serveTsx = withTsx ? await measureServeIdle({ windowMs: SERVE_IDLE_WINDOW_MS, runtime: 'tsx', progress }) : null;
  return {
    runner_start_ms_median: built.start_ms_median,
    runner_rss_mb: built.rss_mb_max,
    serve_idle_rss_mb: serve.rss_mb,
    serve_idle_cpu_percent: serve.cpu_percent,
    runtime: { runner_start: { built, tsx }, serve_idle: { built: serve, tsx: serveTsx } },
  };
}

/** Table rows: measure, built, tsx, target. */
export function runtimeRows(r: RuntimeBench): string[][] {
  const { runner_start: start, serve_idle: idle } = r.runtime;
  const or = <T>(x: T | null, f: (x: T) => string) => (x == null ? 'n/a' : f(x));
  return [
    [
      'runner_start_ms_median',
      `${start.built.start_ms_median} ms (${start.built.start_ms.length} runners)`,
      or(start.tsx, (t) => `${t.start_ms_median} ms`),
      '< 150 ms',
    ],
    ['runner_rss_mb (peak, largest)', `${start.built.rss_mb_max} MB`, or(start.tsx, (t) => `${t.rss_mb_max} MB`), '< 60 MB'],
    ['serve_idle_rss_mb', `${idle.built.rss_mb} MB`, or(idle.tsx, (t) => `${t.rss_mb} MB`), '< 120 MB'],
    ['serve_idle_cpu_percent', `${idle.built.cpu_percent} % over ${idle.built.window_s} s`, or(idle.tsx, (t) => `${t.cpu_percent} %`), '< 0.5 %'],
  ];
}
