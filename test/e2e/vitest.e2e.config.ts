// The browser end-to-end tests: Debian's Chromium driven by playwright-core against a
// real `exobar serve` with sim runners. Kept out of the default vitest projects (they
// start a server, runners and a browser); run them with
//   npx vitest run --config test/e2e/vitest.e2e.config.ts
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: {
    name: 'e2e',
    environment: 'node',
    include: ['test/e2e/**/*.e2e.test.ts'],
    // The page is built once into out/renderer, which `exobar serve` serves at `/`.
    globalSetup: ['test/e2e/global-setup.ts'],
    // One server and one browser at a time: the machine has 2 cores.
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 120_000,
  },
});
