/** Builds the page once for every browser test file. */
import { buildRenderer } from './build-renderer';

export default async function setup(): Promise<void> {
  await buildRenderer();
}
