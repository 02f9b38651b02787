/**
 * What `electron-builder --mac` would put in the app, computed without packaging
 * (which needs the Electron binary): the files in app.asar, those unpacked beside it,
 * the extraResources, and the production dependencies it adds.
 */
import { readdirSync, readFileSync, statSync, type Stats } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import type { Configuration } from 'electron-builder';
import { builderConfig, builderFiles, builderVersion, matcherContext, type FileMatcher } from './builder-internals';

export interface PackageContents {
  configFile: string;
  builderVersion: string;
  config: Configuration;
  /** Files in app.asar, relative to the app directory, sorted. */
  asar: string[];
  /** Of those, the ones unpacked to app.asar.unpacked. */
  unpacked: string[];
  /** Files under Contents/Resources from extraResources, relative to it, sorted. */
  resources: string[];
  /** Production dependencies electron-builder adds to app.asar, and the ones the files patterns leave out. */
  dependencies: { included: string[]; excluded: string[] };
}

/** Walks `dir` like electron-builder's copyDir: the filter decides for directories and files. */
function walk(dir: string, filter: (file: string, stat: Stats) => boolean, out: string[]): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names.sort()) {
    const file = join(dir, name);
    let stat: Stats;
    try {
      stat = statSync(file);
    } catch {
      continue;
    }
    if (!filter(file, stat)) continue;
    if (stat.isDirectory()) walk(file, filter, out);
    else out.push(file);
  }
}

function filesOf(matcher: FileMatcher): string[] {
  const files: string[] = [];
  walk(matcher.from, matcher.createFilter(), files);
  return files;
}

const posix = (p: string) => p.split(sep).join('/');

/** Reads and validates the electron-builder config of `projectDir`, then resolves every file set. */
export async function packageContents(projectDir: string): Promise<PackageContents> {
  const root = resolve(projectDir);
  const { getConfig, validateConfiguration } = builderConfig();
  const { getMainFileMatchers, getNodeModuleFileMatcher, getFileMatchers } = builderFiles();

  const config = await getConfig(root, null, null);
  await validateConfiguration(config, { isEnabled: false, add: () => undefined });
  const buildResources = resolve(root, config.directories?.buildResources ?? 'build');
  const outDir = resolve(root, config.directories?.output ?? 'dist');
  const ctx = matcherContext(root, config, buildResources, outDir);

  const APP = join(outDir, 'APP');
  const asarAbsolute = getMainFileMatchers(root, APP, ctx.macroExpander, ctx.platformOptions, ctx.packager, outDir, false).flatMap(filesOf);
  const asar = asarAbsolute.map((f) => posix(relative(root, f))).sort();

  const unpackMatchers = getFileMatchers(config, 'asarUnpack', APP, ctx.options) ?? [];
  const unpacked = asarAbsolute
    .filter((file) => unpackMatchers.some((m) => m.createFilter()(file, statSync(file))))
    .map((f) => posix(relative(root, f)))
    .sort();

  const RESOURCES = join(outDir, 'RESOURCES');
  const resources: string[] = [];
  for (const matcher of getFileMatchers(config, 'extraResources', RESOURCES, ctx.options) ?? []) {
    if (matcher.isEmpty() || matcher.containsOnlyIgnore()) matcher.prependPattern('**/*');
    for (const file of filesOf(matcher)) resources.push(posix(relative(RESOURCES, join(matcher.to, relative(matcher.from, file)))));
  }
  resources.sort();

  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  const nodeModules = getNodeModuleFileMatcher(root, APP, ctx.macroExpander, ctx.platformOptions, ctx.packager);
  const keeps = nodeModules.createFilter();
  const fileStat = { isDirectory: () => false } as Stats;
  const dependencies = { included: [] as string[], excluded: [] as string[] };
  for (const name of Object.keys(pkg.dependencies ?? {}).sort()) {
    const probe = join(root, 'node_modules', name, 'package.json');
    (keeps(probe, fileStat) ? dependencies.included : dependencies.excluded).push(name);
  }

  return { configFile: 'electron-builder.yml', builderVersion: builderVersion(), config, asar, unpacked, resources, dependencies };
}
