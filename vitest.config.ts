import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Two test files at a time. Vitest's default on two cores is one (cores minus one), and
    // most files spend their time waiting on child processes, sockets and timers, not on
    // the CPU: measured on 12 such files, 150 s with one worker, 76 s with two, each
    // file's own time unchanged. Three starved the timing tests on a loaded machine.
    maxWorkers: 2,
    projects: [
      {
        test: {
          name: 'node',
          environment: 'node',
          include: ['electron/**/*.test.ts', 'shared/**/*.test.ts', 'bench/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: ['test/e2e/**', 'node_modules/**'],
          // Runners, `exobar serve` and the bench run built JavaScript: build out/ once, if stale.
          globalSetup: ['test/build-node-setup.ts'],
          // One Electron mock for every file that imports electron (the binary is absent on CI).
          setupFiles: ['test/support/electron/mock-electron.setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        plugins: [react()],
        test: {
          name: 'renderer',
          environment: 'jsdom',
          include: ['renderer/**/*.test.ts', 'renderer/**/*.test.tsx'],
          // Finds wait up to 30 s for what they look for (see the setup file); a test gets
          // the node project's 60 s so that a slow render on a loaded machine is not a failure.
          setupFiles: ['test/support/renderer/wait-for-events.setup.ts'],
          testTimeout: 60_000,
        },
      },
    ],
  },
});
