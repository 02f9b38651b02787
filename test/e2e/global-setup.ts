/**
 * Builds once for every browser test file, each only when missing or older than its
 * sources: out/ for `exobar serve` and its sim runners (what the app ships), and the page
 * into out/renderer (scripts/build-page.js, with NODE_ENV=production in a child process).
 * `npm test` runs the unit tests first, whose setup has built both already: building the
 * page a second time here cost a whole vite build for the same files.
 */
import { ensureNodeBuild } from '../../scripts/build-node.js';
import { ensurePageBuild } from '../../scripts/build-page.js';

export default function setup(): void {
  ensureNodeBuild();
  ensurePageBuild();
}
