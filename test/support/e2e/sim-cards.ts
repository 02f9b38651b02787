/** The safe pair's two sim models, and their cards on the page (a region named by the model). */
import type { Locator, Page } from 'playwright-core';

export const SMALL = 'sim/llama-3.2-1b';
export const MEDIUM = 'sim/llama-3.2-3b';

/** The 1B's and the 3B's cards on `page()` (a function: the tests' page is set in beforeAll). */
export function simCards(page: () => Page) {
  const card = (name: string): Locator => page().getByRole('region', { name });
  return { card, card1b: () => card('Llama 3.2 1B (simulated)'), card3b: () => card('Llama 3.2 3B (simulated)') };
}
