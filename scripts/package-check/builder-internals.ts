/**
 * electron-builder's own configuration loader, schema validation and file matchers,
 * so the package check reads electron-builder.yml and resolves its globs exactly as
 * `electron-builder` does. They are internal modules of app-builder-lib (pinned with
 * electron-builder in package.json); a clear error says so if they move.
 */
import { createRequire } from 'node:module';
import type { Stats } from 'node:fs';
import type { Configuration } from 'electron-builder';

const require = createRequire(import.meta.url);

export interface FileMatcher {
  from: string;
  to: string;
  patterns: string[];
  isEmpty(): boolean;
  containsOnlyIgnore(): boolean;
  prependPattern(pattern: string): void;
  createFilter(): (file: string, stat: Stats) => boolean;
}

type MacroExpander = (pattern: string) => string;

interface GetFileMatchersOptions {
  macroExpander: MacroExpander;
  customBuildOptions: Record<string, unknown>;
  globalOutDir: string;
  defaultSrc: string;
}

interface FakePlatformPackager {
  info: { projectDir: string; buildResourcesDir: string; config: Configuration; isPrepackedAppAsar: boolean; debugLogger: { isEnabled: boolean } };
  config: Configuration;
  debugLogger: { isEnabled: boolean };
}

interface ConfigModule {
  getConfig(projectDir: string, configPath: string | null, configFromOptions: null): Promise<Configuration>;
  validateConfiguration(config: Configuration, debugLogger: { isEnabled: boolean; add(key: string, value: unknown): void }): Promise<void>;
}

interface FileMatcherModule {
  getMainFileMatchers(
    appDir: string,
    destination: string,
    macroExpander: MacroExpander,
    platformOptions: Record<string, unknown>,
    packager: FakePlatformPackager,
    outDir: string,
    isElectronCompile: boolean,
  ): FileMatcher[];
  getNodeModuleFileMatcher(
    appDir: string,
    destination: string,
    macroExpander: MacroExpander,
    platformOptions: Record<string, unknown>,
    packager: { config: Configuration; debugLogger: { isEnabled: boolean } },
  ): FileMatcher;
  getFileMatchers(config: Configuration, name: string, destination: string, options: GetFileMatchersOptions): FileMatcher[] | null;
}

function load<T>(path: string): T {
  try {
    return require(path) as T;
  } catch (error) {
    throw new Error(
      `package check: cannot load ${path} (${(error as Error).message}); electron-builder's internals moved? Update scripts/package-check/builder-internals.ts.`,
    );
  }
}

export const builderConfig = () => load<ConfigModule>('app-builder-lib/out/util/config/config.js');
export const builderFiles = () => load<FileMatcherModule>('app-builder-lib/out/fileMatcher.js');

export function builderVersion(): string {
  return load<{ version: string }>('electron-builder/package.json').version;
}

/** The options electron-builder passes to its matchers for one platform. */
export function matcherContext(projectDir: string, config: Configuration, buildResourcesDir: string, outDir: string) {
  const macroExpander: MacroExpander = (p) => p;
  const platformOptions = (config.mac ?? {}) as Record<string, unknown>;
  const debugLogger = { isEnabled: false };
  const packager: FakePlatformPackager = {
    info: { projectDir, buildResourcesDir, config, isPrepackedAppAsar: false, debugLogger },
    config,
    debugLogger,
  };
  const options: GetFileMatchersOptions = { macroExpander, customBuildOptions: platformOptions, globalOutDir: outDir, defaultSrc: projectDir };
  return { macroExpander, platformOptions, packager, options };
}
