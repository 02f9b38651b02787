/**
 * Builds once for every browser test file: the page, and out/ for `exobar serve` and
 * its sim runners (what the app ships), if stale.
 */
import { ensureNodeBuild } from '../../scripts/build-node.js';
import { buildRenderer } from './build-renderer';

export default async function setup(): Promise<void> {
  ensureNodeBuild();
  await buildRenderer();
}
