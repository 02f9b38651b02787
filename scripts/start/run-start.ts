/**
 * `npm start`: build and launch the Electron app; where the Electron binary is
 * missing, say so in one line and run `exobar serve` instead (args are forwarded).
 *
 * EXOBAR_START_SKIP_BUILD=1 skips the build (tests; a build you just made).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { decideStart, fallbackLine, SLOW_PROBE_LINE } from './decide-start';
import { probeElectron } from './probe-electron';

const root = join(import.meta.dirname, '..', '..');

/**
 * Runs a child with the terminal; resolves with its exit code. The child leads its own
 * process group, so a Ctrl-C reaches it exactly once, through us: `exobar serve`
 * treats a second SIGINT as "kill the runners now".
 */
function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return new Promise((resolve) => {
    const child: ChildProcess = spawn(command, args, { cwd: root, env, stdio: 'inherit', detached: true });
    const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
    const forwarders = signals.map((signal) => {
      const forward = () => child.kill(signal);
      process.on(signal, forward);
      return () => process.off(signal, forward);
    });
    const done = (code: number) => {
      for (const off of forwarders) off();
      resolve(code);
    };
    child.once('error', (error) => {
      console.error(`exobar: could not run ${command}: ${error.message}`);
      done(1);
    });
    child.once('exit', (code, signal) => done(code ?? (signal === 'SIGINT' || signal === 'SIGTERM' ? 0 : 1)));
  });
}

const skipBuild = () => process.env.EXOBAR_START_SKIP_BUILD === '1';

export async function main(argv: string[]): Promise<number> {
  const probe = await probeElectron({
    cwd: root,
    onSlow: () => console.log(SLOW_PROBE_LINE),
  });
  const plan = decideStart(probe, existsSync);

  if (plan.mode === 'serve') {
    console.log(fallbackLine(plan.reason));
    if (!skipBuild()) {
      // The page `exobar serve` shows in the browser.
      const built = await run(process.execPath, [
        join(root, 'node_modules/vite/bin/vite.js'),
        'build',
        '--config',
        'renderer/vite.config.ts',
        '--logLevel',
        'warn',
      ]);
      if (built !== 0) return built;
    }
    return run(process.execPath, [join(root, 'bin/exobar.js'), 'serve', ...argv]);
  }

  if (!skipBuild()) {
    const built = await run(process.execPath, [join(root, 'node_modules/electron-vite/bin/electron-vite.js'), 'build', '--logLevel', 'warn']);
    if (built !== 0) return built;
  }
  // As Electron's own CLI does: the app directory (package.json "main": out/main/index.js).
  const env = { ...process.env };
  delete env.ELECTRON_RUN_AS_NODE;
  return run(plan.electronPath, ['.', ...argv], env);
}
