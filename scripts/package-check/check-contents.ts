/**
 * What must be in the package for the app to work, checked against the resolved
 * contents (package-contents.ts): main, preload and renderer with every asset its
 * page loads, the sim runner unpacked from the asar, the MLX runner with every module
 * it imports, the tray images, and the macOS settings the app relies on (fuses,
 * entitlements, LSUIElement), and a main bundle that loads nothing from node_modules.
 */
import { existsSync, readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
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

/** Modules a built JavaScript file loads: static and dynamic imports, re-exports and requires (bundlers' `__require` included). */
export function mainBundleImports(source: string): string[] {
  const modules = new Set<string>();
  // Comment lines (bundled libraries' doc comments show `require('x')` examples) are not code.
  const code = source
    .split('\n')
    .filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line))
    .join('\n');
  const patterns = [
    /^\s*(?:import|export)\s+(?:[^'";]*?\s+from\s+)?["']([^"']+)["']/gm,
    /\bimport\(\s*["']([^"']+)["']\s*\)/g,
    /\b(?:__)?require\(\s*["']([^"']+)["']\s*\)/g,
  ];
  for (const pattern of patterns) for (const m of code.matchAll(pattern)) modules.add(m[1]!);
  return [...modules];
}

/** The only entitlement the app and its helpers need: V8's JIT under the hardened runtime. */
export const ALLOWED_ENTITLEMENTS = ['com.apple.security.cs.allow-jit'];

/** Entitlement keys a plist grants (`<key>…</key>` followed by `<true/>`). */
export function grantedEntitlements(plist: string): string[] {
  return [...plist.matchAll(/<key>\s*([^<\s]+)\s*<\/key>\s*<true\s*\/>/g)].map((m) => m[1]!);
}

/** Fuse settings the app relies on, each with what goes wrong otherwise. */
const REQUIRED_FUSES: Array<{ fuse: string; value: boolean; why?: string }> = [
  { fuse: 'resetAdHocDarwinSignature', value: true, why: 'flipping fuses breaks the signature, and an unsigned build is killed at launch on Apple silicon' },
  { fuse: 'runAsNode', value: true, why: 'the sim runner runs with the app binary as Node' },
  { fuse: 'enableNodeOptionsEnvironmentVariable', value: false },
  { fuse: 'enableNodeCliInspectArguments', value: false },
  { fuse: 'enableEmbeddedAsarIntegrityValidation', value: true },
  { fuse: 'onlyLoadAppFromAsar', value: true },
];

function fuseProblems(fuses: Record<string, unknown> | null | undefined): string[] {
  const problems = REQUIRED_FUSES.filter(({ fuse, value }) => fuses?.[fuse] !== value).map(
    ({ fuse, value, why }) => `electronFuses.${fuse} must be ${String(value)}${why ? `: ${why}` : ''}`,
  );
  if (fuses?.enableCookieEncryption === true) {
    problems.push('electronFuses.enableCookieEncryption must be off: the app keeps no cookies, and it asks for the Keychain in unsigned builds');
  }
  return problems;
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
  for (const what of ['entitlements', 'entitlementsInherit'] as const) {
    const file = mac[what];
    if (!file || !existsSync(join(projectDir, file))) continue;
    const granted = grantedEntitlements(readFileSync(join(projectDir, file), 'utf8'));
    for (const key of granted.filter((k) => !ALLOWED_ENTITLEMENTS.includes(k))) {
      problems.push(`mac.${what} (${file}) grants ${key}, which nothing in the app needs (only ${ALLOWED_ENTITLEMENTS.join(', ')})`);
    }
    if (!granted.includes('com.apple.security.cs.allow-jit'))
      problems.push(`mac.${what} (${file}) must grant com.apple.security.cs.allow-jit: V8 cannot run under the hardened runtime without it`);
  }
  if (mac.hardenedRuntime !== true) problems.push('mac.hardenedRuntime must be true (notarization needs it)');
  if ((mac.extendInfo as Record<string, unknown> | undefined)?.LSUIElement !== true)
    problems.push('mac.extendInfo.LSUIElement must be true: a menu-bar app has no Dock icon');
  const targets = (Array.isArray(mac.target) ? mac.target : []).map((t) => (typeof t === 'string' ? { target: t, arch: [] } : t));
  for (const name of ['dmg', 'zip']) {
    const target = targets.find((t) => t.target === name);
    const arch = target ? ([] as unknown[]).concat(target.arch ?? []) : [];
    if (!target || !arch.includes('arm64')) problems.push(`mac.target must build ${name} for arm64`);
  }
  problems.push(...fuseProblems(contents.config.electronFuses as Record<string, unknown> | null | undefined));

  // Main's npm dependencies are bundled: its file may load only Node built-ins and electron.
  if (asar.has(expected.main)) {
    const outside = mainBundleImports(readFileSync(join(projectDir, expected.main), 'utf8')).filter(
      (m) => !isBuiltin(m) && m !== 'electron' && !m.startsWith('.'),
    );
    if (outside.length > 0)
      problems.push(`${expected.main} loads ${outside.join(', ')} from node_modules: bundle them (electron.vite.config.ts, main.build.externalizeDeps: false)`);
  }
  return problems;
}
