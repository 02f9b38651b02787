// One lint setup for the whole repo: typescript-eslint's recommended rules, React's
// hooks rules for the renderer, and the boundaries between the parts of the app
// (docs/architecture.md, "Boundaries"), which hold because the linter keeps them.
import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

/** `electron` the package, and its subpaths (`electron/main`, `electron/renderer`). */
const ELECTRON_PACKAGE = { regex: '^electron(/|$)', message: 'Electron is imported only by electron/main/ and electron/preload.ts.' };

/**
 * The boundaries, one entry per folder: the files, and the import patterns they must
 * not use. Patterns are regular expressions over the import specifier, so a relative
 * path that climbs into another part of the tree is caught as well as a package name.
 */
const CORE_PATTERNS = [
  { ...ELECTRON_PACKAGE, message: 'electron/core/ is plain Node (it runs in `exobar serve` too): it never imports electron.' },
  { regex: '(^|/)renderer(/|$)', message: 'electron/core/ never imports the renderer: share code through shared/.' },
  {
    regex: '(^(\\.\\./)+|(^|/)electron/)main(/|$)',
    message: 'electron/core/ never imports electron/main/: the main process depends on the core, not the other way.',
  },
];

const BOUNDARIES = [
  { name: 'core', files: ['electron/core/**/*.ts'], patterns: CORE_PATTERNS },
  {
    // A later entry replaces the core's patterns for its files: it repeats them.
    name: 'core leaves of the node',
    // on-demand/'s clients of the node (the loader, the reaper, the feature) use its interface;
    // the parts the node itself imports from on-demand/ are leaves.
    files: [
      'electron/core/events/**/*.ts',
      'electron/core/pacing/**/*.ts',
      'electron/core/sharing/**/*.ts',
      'electron/core/on-demand/residency-state.ts',
      'electron/core/on-demand/on-demand-settings.ts',
      'electron/core/on-demand/unload-refusal.ts',
    ],
    ignores: ['**/*.test.ts'],
    patterns: [
      ...CORE_PATTERNS,
      {
        regex: '^(\\.\\./)+node(/|$)',
        message: 'events/, pacing/, sharing/ and the parts of on-demand/ the node uses never import node/: the node imports them. The events the node records are electron/core/events/node-event.ts.',
      },
    ],
  },
  {
    name: 'renderer',
    files: ['renderer/**/*.ts', 'renderer/**/*.tsx'],
    patterns: [
      {
        regex: '(^|/)electron(/|$)',
        message: 'renderer/ never imports electron or electron/: it runs in a browser too; share code through shared/, talk to the app through the bridge.',
      },
    ],
  },
  {
    name: 'shared',
    files: ['shared/**/*.ts'],
    ignores: ['shared/**/*.test.ts'],
    patterns: [
      { regex: '^(?!zod$)(?!\\.{1,2}/)', message: 'shared/ imports only zod and other shared/ files (it runs in Node and in the browser).' },
      { regex: '^(\\.\\./)+(?!shared/)[^./]', message: 'shared/ imports nothing of the app: only zod and other shared/ files.' },
    ],
  },
  {
    name: 'shared tests',
    files: ['shared/**/*.test.ts'],
    patterns: [
      { regex: '^(?!zod$|vitest$)(?!\\.{1,2}/)', message: 'shared/ tests import only vitest, zod and shared/ files.' },
      { regex: '^(\\.\\./)+(?!shared/)[^./]', message: 'shared/ imports nothing of the app: only zod and other shared/ files.' },
    ],
  },
];

export default tseslint.config(
  { ignores: ['out/**', 'dist/**', 'node_modules/**', 'scratch/**', '.exobar-data/**', 'screenshots/**', 'test-results/**', 'electron/runners/mlx/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        URL: 'readonly',
        Buffer: 'readonly',
        window: 'readonly',
        document: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  { files: ['renderer/**/*.ts', 'renderer/**/*.tsx'], ...reactHooks.configs.flat.recommended },
  {
    // The serving rule (RunnerReady | RunnerRunning) is written once, in shared/instance-state.ts:
    // a type-aware rule, not a text search, so a `case` in any form is found.
    name: 'exobar/facts/serving-rule',
    files: ['electron/**/*.ts', 'renderer/**/*.ts', 'renderer/**/*.tsx', 'bench/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'SwitchCase > Literal.test[value=/^Runner(Ready|Running)$/]',
          message: 'Which runner statuses serve is the serving rule: use isServingStatus (shared/instance-state.ts).',
        },
      ],
    },
  },
  ...BOUNDARIES.map(({ name, files, ignores, patterns }) => ({
    name: `exobar/boundaries/${name}`,
    files,
    ...(ignores ? { ignores } : {}),
    rules: { 'no-restricted-imports': ['error', { patterns }] },
  })),
);
