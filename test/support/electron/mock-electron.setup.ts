/**
 * The one Electron mock of the node project, a `setupFiles` entry of vitest.config.ts:
 * every test file that imports `electron` (the glue in electron/main, the preload) gets
 * the recording fake, because the binary is absent on CI machines. The factory runs
 * only when a file imports `electron`, so the many tests that never do (electron/core is
 * plain Node) load nothing. A test reaches the fake's state through
 * `import { fake } from 'test/support/electron/fake-electron'`: the same module instance.
 */
import { vi } from 'vitest';

vi.mock('electron', () => import('./fake-electron'));
