/**
 * The boundaries between the parts of the app are kept by the linter (eslint.config.js,
 * docs/architecture.md): a forbidden import planted in a folder fails the lint, and the
 * imports each folder may use pass. That the tree as it is passes is `npm run lint`'s
 * job, a stage `npm test` always runs (linting the whole tree again here took over a
 * minute on a loaded machine, for the same verdict).
 */
import { join } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
// Only the boundary rule runs: the other rules would report the planted files' unused imports.
const eslint = new ESLint({ cwd: root, ruleFilter: ({ ruleId }) => ruleId === 'no-restricted-imports' });

/** The boundary messages ESLint reports for `code` placed at `file` (never written to disk). */
async function violations(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(root, file) });
  return result!.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

// Loading ESLint's parsers and rules takes the first case tens of seconds on a loaded
// 2-core machine: a guard against a hang, not a window.
describe('lint boundaries', { timeout: 240_000 }, () => {
  it.each([
    ['electron/core/x.ts', "import { app } from 'electron';", /electron\/core\/ is plain Node/],
    ['electron/core/x.ts', "import type { BrowserWindow } from 'electron/main';", /electron\/core\/ is plain Node/],
    ['electron/core/api/x.ts', "import { appPaths } from '../../main/app-paths';", /never imports electron\/main/],
    ['electron/core/x.ts', "export { createStore } from '../../renderer/src/store';", /never imports the renderer/],
    ['renderer/src/x.ts', "import { ipcRenderer } from 'electron';", /renderer\/ never imports electron/],
    ['renderer/src/components/x.tsx', "import { createNode } from '../../../electron/core/node';", /renderer\/ never imports electron/],
    ['shared/x.ts', "import pino from 'pino';", /shared\/ imports only zod/],
    ['shared/x.ts', "import { readFileSync } from 'node:fs';", /shared\/ imports only zod/],
    ['shared/x.ts', "import type { ExobarNode } from '../electron/core/node/node-types';", /shared\/ imports nothing of the app/],
    ['electron/core/pacing/x.ts', "import type { Instance } from '../node/instance';", /never import node\//],
    ['electron/core/sharing/x.ts', "import { overlapMs } from '../node/request-metrics';", /never import node\//],
    ['electron/core/events/x.ts', "import type { NodeOptions } from '../node/node-types';", /never import node\//],
    ['electron/core/on-demand/unload-refusal.ts', "import { NodeError } from '../node/node-types';", /never import node\//],
    // The core's own rules still hold in a leaf.
    ['electron/core/pacing/x.ts', "import { app } from 'electron';", /electron\/core\/ is plain Node/],
  ])('%s: %s fails', async (file, code, message) => {
    const found = await violations(file, code);
    expect(found.length).toBeGreaterThan(0);
    for (const violation of found) expect(violation).toMatch(/^no-restricted-imports: /);
    expect(
      found.some((violation) => message.test(violation)),
      found.join('\n'),
    ).toBe(true);
  });

  it.each([
    [
      'electron/core/x.ts',
      "import { z } from 'zod';\nimport { readFileSync } from 'node:fs';\nimport type { Snapshot } from '../../shared/snapshot';\nimport { createNode } from './node';",
    ],
    ['electron/core/api/x.ts', "import { startCore } from '../start-core';\nimport { simSpawnSpec } from '../node/sim-spawn-spec';"],
    ['electron/main/x.ts', "import { app } from 'electron';\nimport { startCore } from '../core/start-core';"],
    [
      'renderer/src/x.tsx',
      "import { useState } from 'react';\nimport type { Snapshot } from '../../shared/snapshot';\nimport { pickBridge } from './electron-bridge';",
    ],
    ['shared/x.ts', "import { z } from 'zod';\nimport { findSimModel } from './catalog';"],
    ['shared/x.test.ts', "import { describe } from 'vitest';\nimport { findSimModel } from './catalog';"],
  ])('%s: its allowed imports pass', async (file, code) => {
    expect(await violations(file, code)).toEqual([]);
  });

  it("React's hooks rules run on the renderer: a hook called conditionally fails", async () => {
    const hooks = new ESLint({ cwd: root, ruleFilter: ({ ruleId }) => ruleId.startsWith('react-hooks/') });
    const code = "import { useState } from 'react';\nexport function Card({ open }: { open: boolean }) {\n  if (open) useState(0);\n  return null;\n}\n";
    const [result] = await hooks.lintText(code, { filePath: join(root, 'renderer/src/components/x.tsx') });
    expect(result!.messages.map((m) => m.ruleId)).toContain('react-hooks/rules-of-hooks');
  });
});
