/**
 * vitest globalSetup: builds out/ once before the tests when it is missing or older
 * than the sources (scripts/build-node.js), so the tests run what ships: the sim runner
 * bundle the app packages, and `exobar serve` from out/node. The page too
 * (scripts/build-page.js): `exobar serve` builds it when stale, and a test's serve must
 * not spend its time doing so.
 */
import { ensureNodeBuild } from '../scripts/build-node.js';
import { ensurePageBuild } from '../scripts/build-page.js';

export default function setup(): void {
  ensureNodeBuild();
  ensurePageBuild();
}
