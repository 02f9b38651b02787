import { cleanup, screen, within } from '@testing-library/react';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Snapshot } from '../../../../shared/snapshot';
import { loadDownloadsScenario } from '../../../../test/support/renderer/exo-scenarios';
import { renderApp } from '../../../../test/support/renderer/render-app';

afterEach(cleanup);

let snapshot: Snapshot;
beforeAll(async () => {
  snapshot = await loadDownloadsScenario();
}, 30_000);

const macRow = (name: string) => screen.getAllByTestId('exo-node').find((n) => n.getAttribute('data-node') === name)!;

describe("downloads on the Macs' rows", () => {
  it('shows an ongoing download with bytes, percent, speed and time left, and a failed one with exo’s message', () => {
    renderApp(snapshot);
    const studio = within(macRow('studio-a'));
    const [download] = studio.getAllByTestId('exo-download');
    expect(download!.getAttribute('data-status')).toBe('ongoing');
    expect(download!.textContent).toContain('Qwen3-30B-A3B-4bit');
    expect(studio.getByTestId('exo-download-progress').textContent).toBe('26% · 4.2 GiB of 16.0 GiB · 80 MB/s · 2 m 38 s left');
    expect(studio.getByRole('progressbar', { name: 'Downloading Qwen3-30B-A3B-4bit on studio-a' })).toBeTruthy();
    // The placed model's completed download and the 123 pending cards are not listed.
    expect(studio.getAllByTestId('exo-download')).toHaveLength(1);
    const failed = within(macRow('mini-b')).getByTestId('exo-download');
    expect(failed.getAttribute('data-status')).toBe('failed');
    expect(failed.textContent).toContain('Not enough disk space: 9.8 GB free, 12.0 GB needed');
  });
});
