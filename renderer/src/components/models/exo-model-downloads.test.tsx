import { cleanup, fireEvent, screen, within } from '@testing-library/react';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Snapshot } from '../../../../shared/snapshot';
import { loadDownloadsScenario } from '../../../../test/support/renderer/exo-scenarios';
import { snapshot as emptySnapshot } from '../../../../test/support/renderer/fixtures';
import { renderApp } from '../../../../test/support/renderer/render-app';
import { ModelsPanel } from './models-panel';

afterEach(cleanup);

let snapshot: Snapshot;
beforeAll(async () => {
  snapshot = await loadDownloadsScenario();
}, 30_000);

function openModels(s: Snapshot) {
  renderApp(s, {}, <ModelsPanel />);
  fireEvent.click(within(screen.getByRole('region', { name: 'Models' })).getByRole('button', { name: /^Models/ }));
}

describe('exo downloads in the Models panel', () => {
  it("shows each Mac's ongoing and failed downloads and the models exo has downloaded, never the pending cards", () => {
    openModels(snapshot);
    const part = within(screen.getByRole('region', { name: 'exo downloads' }));
    const macs = part.getAllByTestId('exo-model-downloads-node').map((n) => n.getAttribute('data-node'));
    expect(macs).toEqual(['studio-a', 'mini-b']);
    const studio = within(part.getAllByTestId('exo-model-downloads-node')[0]!);
    expect(studio.getByTestId('exo-download').getAttribute('data-status')).toBe('ongoing');
    expect(studio.getByTestId('exo-download-progress').textContent).toBe('26% · 4.2 GiB of 16.0 GiB · 80 MB/s · 2 m 38 s left');
    const failed = within(part.getAllByTestId('exo-model-downloads-node')[1]!).getByTestId('exo-download');
    expect(failed.getAttribute('data-status')).toBe('failed');
    expect(failed.textContent).toContain('Not enough disk space: 9.8 GB free, 12.0 GB needed');
    // What exo has on disk: what the safe pair on exo picks from (here the placed 1B on studio-a).
    const downloaded = part.getAllByTestId('exo-downloaded');
    expect(downloaded.map((d) => d.getAttribute('data-model'))).toEqual(['mlx-community/Llama-3.2-1B-Instruct-4bit']);
    expect(downloaded[0]!.textContent).toContain('on studio-a');
    expect(part.getByText(/the safe pair picks from these/)).toBeTruthy();
    // 2 Macs x 123 pending cards, none listed.
    expect(part.getAllByTestId('exo-download')).toHaveLength(2);
  });

  it('shows nothing without exo', () => {
    openModels(emptySnapshot());
    expect(screen.queryByRole('region', { name: 'exo downloads' })).toBeNull();
  });
});
