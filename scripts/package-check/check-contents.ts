/**
 * What must be in the package for the app to work, checked against the resolved
 * contents (package-contents.ts): main, preload and renderer with every asset its
 * page loads, the sim runner unpacked from the asar, the MLX runner with every module
 * it imports, the tray images, and the macOS settings the app relies on.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { appPaths } from '../../electron/main/app-paths';
import { TRAY_STATES } from '../../electron/main/tray-state';
import type { PackageContents } from './package-contents';

/** Paths the app computes at run time (electron/main/app-paths.ts), relative to the app directory. */
export function expectedAppFiles(): { main: string; preload: string; renderer: string; simRunner: string } {
  const paths = appPaths({ mainDir: '/APP/out/main', appPath: '/APP', resourcesPath: '/RES', isPackaged: true });
  const rel = (p: string) => posix.relative('/APP', p.replace('/APP/app.asar.unpacked', '/APP'));
  return { main: 'out/main/index.js', preload: rel(paths.preload), renderer: `${rel(paths.rendererDir)}/index.html`, simRunner: rel(paths.simRunnerJs) };
}

/** Script and stylesheet URLs a built index.html loads, relative to it. */
export function pageAssets(html: string): string[] {
  const urls = [...html.matchAll(/<(?:script|link)\b[^>]*?\s(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
  return urls.filter((u) => !/^(data:|https?:|#)/.test(u)).map((u) => posix.normalize(u.replace(/^\.\//, '')));
}

/** Modules the MLX runner imports from its own package (`from .x import`, `from exobar_mlx.x import`). */
export function pythonLocalImports(source: string): string[] {
  const modules = new Set<string>();
  for (const m of source.matchAll(/^\s*from\s+(\.|exobar_mlx\.)([A-Za-z_][A-Za-z0-9_]*)\s+import\b/gm)) modules.add(m[2]!);
  return [...modules];
}

export interface CheckInput {
  projectDir: string;
  contents: PackageContents;
}

/** Problems in words; empty when the package has everything. */
export function checkPackageContents({ projectDir, contents }: CheckInput): string[] {
  const problems: string[] = [];
  const asar = new Set(contents.asar);
  const resources = new Set(contents.resources);
  const expected = expectedAppFiles();
  const pkg = JSON.parse(readFileSync(join(projectDir, 'package.json'), 'utf8')) as { main?: string };

  if (pkg.main !== expected.main) problems.push(`package.json "main" is ${pkg.main}, the build writes ${expected.main}`);
  for (const [what, file] of Object.entries(expected)) {
    if (!asar.has(file)) problems.push(`${what}: ${file} is not in app.asar (run \`npm run build\` first?)`);
  }
  if (!contents.unpacked.includes(expected.simRunner)) problems.push(`${expected.simRunner} must be unpacked (asarUnpack): it runs as its own process`);

  if (asar.has(expected.renderer)) {
    const html = readFileSync(join(projectDir, expected.renderer), 'utf8');
    const dir = posix.dirname(expected.renderer);
    for (const asset of pageAssets(html)) {
      if (!asar.has(posix.join(dir, asset))) problems.push(`the page loads ${asset}, which is not in app.asar`);
    }
  }

  for (const file of contents.asar) {
    if (/\.(ts|tsx|mts|cts)$/.test(file) && !file.endsWith('.d.ts')) problems.push(`source file in the package: ${file}`);
    if (/\.test\.|(^|\/)__tests__\//.test(file)) problems.push(`test file in the package: ${file}`);
    if (file.endsWith('.map')) problems.push(`source map in the package: ${file}`);
  }

  const mlx = 'runners/mlx';
  for (const file of [`${mlx}/runner.py`, `${mlx}/exobar_mlx/__init__.py`, `${mlx}/exobar_mlx/main.py`]) {
    if (!resources.has(file)) problems.push(`MLX runner: ${file} is not in Resources`);
  }
  for (const file of contents.resources.filter((f) => f.startsWith(`${mlx}/`) && f.endsWith('.py'))) {
    const source = readFileSync(join(projectDir, 'electron/runners/mlx', file.slice(mlx.length + 1)), 'utf8');
    for (const module of pythonLocalImports(source)) {
      if (!resources.has(`${mlx}/exobar_mlx/${module}.py`) && !resources.has(`${mlx}/exobar_mlx/${module}/__init__.py`)) {
        problems.push(`MLX runner: ${file} imports exobar_mlx.${module}, which is not in Resources`);
      }
    }
  }
  for (const file of contents.resources) {
    if (/(^|\/)(tests?|__pycache__)\//.test(file) || /\.(ts|pyc)$/.test(file)) problems.push(`not for the package: Resources/${file}`);
  }

  for (const state of TRAY_STATES) {
    for (const suffix of ['', '@2x']) {
      const file = `tray/tray-${state}Template${suffix}.png`;
      if (!resources.has(file)) problems.push(`tray image ${file} is not in Resources`);
    }
  }

  const mac = contents.config.mac ?? {};
  const requireFile = (what: string, file: string | null | undefined) => {
    if (!file) problems.push(`mac.${what} is not set`);
    else if (!existsSync(join(projectDir, file))) problems.push(`mac.${what}: ${file} does not exist`);
  };
  requireFile('icon', mac.icon);
  requireFile('entitlements', mac.entitlements);
  requireFile('entitlementsInherit', mac.entitlementsInherit);
  if (mac.hardenedRuntime !== true) problems.push('mac.hardenedRuntime must be true (notarization needs it)');
  if ((mac.extendInfo as Record<string, unknown> | undefined)?.LSUIElement !== true) problems.push('mac.extendInfo.LSUIElement must be true: a menu-bar app has no Dock icon');
  const targets = (Array.isArray(mac.target) ? mac.target : []).map((t) => (typeof t === 'string' ? { target: t, arch: [] } : t));
  for (const name of ['dmg', 'zip']) {
    const target = targets.find((t) => t.target === name);
    const arch = target ? ([] as unknown[]).concat(target.arch ?? []) : [];
    if (!target || !arch.includes('arm64')) problems.push(`mac.target must build ${name} for arm64`);
  }
  if (contents.config.electronFuses?.runAsNode === false) problems.push('electronFuses.runAsNode must stay on: the sim runner runs with the app binary as Node');
  if (contents.dependencies.excluded.some((d) => ['pino', 'zod', 'yazl'].includes(d))) problems.push(`a runtime dependency is left out: ${contents.dependencies.excluded.join(', ')}`);
  return problems;
}
