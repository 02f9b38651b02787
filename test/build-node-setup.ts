/**
 * vitest globalSetup: builds out/ once before the tests when it is missing or older
 * than the sources (scripts/build-node.js), so the tests run what ships: the sim runner
 * bundle the app packages, and `exobar serve` from out/node.
 */
import { ensureNodeBuild } from '../scripts/build-node.js';

export default function setup(): void {
  ensureNodeBuild();
}
