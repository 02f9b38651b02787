/**
 * "Set up MLX runtime" from the command line, the same function the app runs:
 * `node --import tsx electron/core/mlx/setup-mlx-runtime-cli.ts <dataDir>`.
 * CI uses it to make the venv the real-MLX tests run with (on Linux: mlx[cpu]), so the
 * app's setup path is exercised for real. Prints each step and pip's output, then the
 * venv's Python on the last line; exits 1 with the step and reason when setup fails.
 */
import { resolve } from 'node:path';
import { MlxSetupError, setupMlxRuntime } from './setup-mlx-runtime';

/** Runs the setup into `dataDir`; resolves with the process exit code. */
export async function runSetupCli(args: readonly string[], write: (line: string) => void = console.log): Promise<number> {
  const dataDir = args[0];
  if (!dataDir || args.length > 1) {
    write('usage: setup-mlx-runtime-cli.ts <dataDir>');
    return 2;
  }
  const started = Date.now();
  let step = '';
  try {
    const status = await setupMlxRuntime({
      dataDir: resolve(dataDir),
      onProgress: (progress) => {
        if (progress.line !== undefined) {
          write(`  ${progress.line}`);
        } else if (progress.step !== step || progress.step === 'done') {
          step = progress.step;
          write(`mlx setup: ${progress.step}: ${progress.message}`);
        }
      },
    });
    write(`mlx setup: ${status.reason} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    write(status.python ?? '');
    return 0;
  } catch (error) {
    const where = error instanceof MlxSetupError ? ` at ${error.step}` : '';
    write(`mlx setup failed${where}: ${(error as Error).message}`);
    return 1;
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) {
  void runSetupCli(process.argv.slice(2)).then((code) => process.exit(code));
}
