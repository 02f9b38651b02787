/**
 * Lists what `electron-builder --mac` would put in exobar.app and checks that the app's
 * parts are there, without the Electron binary (which packaging needs). Reads
 * electron-builder.yml through electron-builder's own loader and schema, and resolves
 * its globs with electron-builder's own matchers against what `npm run build` wrote.
 *
 *   npm run build && node --import tsx scripts/check-package-files.ts [projectDir]
 *
 * Exit code 0 when everything is there, 1 with the problems listed otherwise.
 */
import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkPackageContents } from './package-check/check-contents';
import { packageContents, type PackageContents } from './package-check/package-contents';

function kib(projectDir: string, files: string[]): string {
  const bytes = files.reduce((sum, f) => sum + statSync(join(projectDir, f)).size, 0);
  return `${(bytes / 1024).toFixed(0)} KiB`;
}

/** The listing, as printed. */
export function formatListing(projectDir: string, contents: PackageContents, problems: string[]): string {
  const lines = [
    `${contents.configFile}: valid for electron-builder ${contents.builderVersion}`,
    `app.asar (${contents.asar.length} files, ${kib(projectDir, contents.asar)}):`,
    ...contents.asar.map((f) => `  ${f}${contents.unpacked.includes(f) ? '   [unpacked to app.asar.unpacked]' : ''}`),
    `  + node_modules of: ${contents.dependencies.included.join(', ') || 'none (main bundles its dependencies)'}${contents.dependencies.excluded.length ? ` (left out: ${contents.dependencies.excluded.join(', ')})` : ''}`,
    `Contents/Resources (${contents.resources.length} files from extraResources):`,
    ...contents.resources.map((f) => `  ${f}`),
  ];
  if (problems.length === 0)
    lines.push(
      'OK: main (dependencies bundled), preload, renderer and its assets, sim runner (unpacked), MLX runner, tray images, icon, entitlements (allow-jit only), fuses (ad-hoc signature reset), LSUIElement',
    );
  else lines.push(`${problems.length} problem${problems.length > 1 ? 's' : ''}:`, ...problems.map((p) => `  - ${p}`));
  return lines.join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const projectDir = resolve(argv[0] ?? join(fileURLToPath(new URL('..', import.meta.url))));
  const contents = await packageContents(projectDir);
  const problems = checkPackageContents({ projectDir, contents });
  console.log(formatListing(projectDir, contents, problems));
  return problems.length === 0 ? 0 : 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (error: unknown) => {
      console.error(`package check: ${(error as Error).message}`);
      process.exitCode = 1;
    },
  );
}
