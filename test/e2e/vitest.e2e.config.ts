// The browser end-to-end tests: Debian's Chromium driven by playwright-core against a
// real `exobar serve` with sim runners. Kept out of the default vitest projects (they
// start a server, runners and a browser); run them with
//   npx vitest run --config test/e2e/vitest.e2e.config.ts
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
// CI installs Chromium and must run these. A developer machine without it (a Mac, say)
// still passes `npm test`, with one loud line saying what was not run and how to run it.
const skipBrowserTests = !existsSync(chromiumPath) && !process.env.CI;
if (skipBrowserTests) {
  process.stderr.write(
    `\nbrowser tests SKIPPED: no Chromium at ${chromiumPath} (apt-get install -y chromium, or set CHROMIUM_PATH to a Chrome or Chromium binary)\n\n`,
  );
}

export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: {
    name: 'e2e',
    environment: 'node',
    include: skipBrowserTests ? [] : ['test/e2e/**/*.e2e.test.ts'],
    passWithNoTests: skipBrowserTests,
    // The page is built once into out/renderer, which `exobar serve` serves at `/`.
    globalSetup: skipBrowserTests ? [] : ['test/e2e/global-setup.ts'],
    // One test file at a time: each test starts an exobar server and a Chromium, and several at once would starve each other.
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 120_000,
  },
});
