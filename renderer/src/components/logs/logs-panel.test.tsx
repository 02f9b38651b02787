import { act, cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LogSourceInfo } from '../../../../shared/logs';
import { renderApp, type Rendered } from '../../../../test/support/renderer/render-app';
import { instance, snapshot } from '../../../../test/support/renderer/fixtures';
import { LOG_SHOWN_LINES, LogsPanel } from './logs-panel';

const SOURCES: LogSourceInfo[] = [
  { id: 'llama-1', title: 'Llama 3.2 1B (simulated): runner log', kind: 'runner', instanceId: 'llama-1', bytes: 10 },
  { id: 'llama-1:stdout', title: 'Llama 3.2 1B (simulated): runner protocol lines', kind: 'runner', instanceId: 'llama-1', bytes: 10 },
  { id: 'exobar', title: 'exobar: its own log', kind: 'exobar', instanceId: null, bytes: 10 },
];
// What the sim runner writes (pino), and a Python runner's and exo's lines.
const pino = (level: number, msg: string) => JSON.stringify({ level, time: Date.UTC(2026, 11, 1, 10, 0, 0), pid: 7, name: 'sim-runner', msg });

let writeText: ReturnType<typeof vi.fn>;
beforeEach(() => {
  writeText = vi.fn(async () => undefined);
  Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
});
afterEach(cleanup);

const region = () => screen.getByRole('region', { name: 'Logs' });
const shownLines = () => within(region()).queryAllByText((_, el) => el?.classList.contains('log-line') ?? false);
const follower = (r: Rendered, source: string) => r.bridge.followed.filter((f) => f.active && f.source === source);

async function openPanel(): Promise<Rendered> {
  const r = renderApp(undefined, {}, <LogsPanel />);
  r.bridge.logSources = SOURCES;
  fireEvent.click(within(region()).getByRole('button', { name: /^Logs/ }));
  await waitFor(() => expect(follower(r, 'llama-1')).toHaveLength(1));
  act(() => r.bridge.log('llama-1', { kind: 'source', id: 'llama-1', title: SOURCES[0]!.title }));
  return r;
}

function send(r: Rendered, source: string, lines: string[]) {
  act(() => r.bridge.log(source, { kind: 'lines', lines }));
}

describe('the log view', () => {
  it("opens at the first model's runner log, asks for its last lines, and shows new lines as they come, pino records formatted", async () => {
    const r = await openPanel();
    expect(follower(r, 'llama-1')[0]!.lines).toBe(500);
    send(r, 'llama-1', [pino(30, 'sim runner started'), '2026-12-01 10:00:01,000 WARNING [mlx:tiny] slow step']);
    await waitFor(() => expect(shownLines()).toHaveLength(2));
    expect(shownLines()[0]!.textContent).toBe('10:00:00.000 INFO  sim runner started');
    expect(shownLines()[1]!.className).toContain('level-warn');
    expect(within(region()).getByTestId('logs-status').textContent).toContain('Following live');
  });

  it('pause holds the view while lines keep arriving, and says how many wait; resume shows them', async () => {
    const r = await openPanel();
    send(r, 'llama-1', ['one']);
    await waitFor(() => expect(shownLines()).toHaveLength(1));
    fireEvent.click(within(region()).getByRole('button', { name: 'Pause' }));
    send(r, 'llama-1', ['two', 'three']);
    await waitFor(() => expect(within(region()).getByTestId('logs-status').textContent).toContain('Paused: 2 new lines waiting'));
    expect(shownLines()).toHaveLength(1);
    fireEvent.click(within(region()).getByRole('button', { name: 'Resume' }));
    await waitFor(() => expect(shownLines().map((l) => l.textContent)).toEqual(['one', 'two', 'three']));
  });

  it("filters by level (a traceback keeps its error's level) and searches, marking the matches; Copy copies the matching lines as written", async () => {
    const r = await openPanel();
    const lines = [
      pino(30, 'request done'),
      pino(50, 'runner crashed'),
      'Traceback (most recent call last):',
      '[ 10:00:00.000 | WARNING ] Fast synch flag: 1',
      pino(20, 'debug detail'),
    ];
    send(r, 'llama-1', lines);
    await waitFor(() => expect(shownLines()).toHaveLength(5));
    fireEvent.change(within(region()).getByRole('combobox', { name: 'Level' }), { target: { value: 'warn' } });
    expect(shownLines().map((l) => l.textContent)).toEqual([
      '10:00:00.000 ERROR runner crashed',
      'Traceback (most recent call last):',
      '[ 10:00:00.000 | WARNING ] Fast synch flag: 1',
    ]);
    fireEvent.change(within(region()).getByRole('searchbox', { name: 'Search the log' }), { target: { value: 'FAST synch' } });
    expect(shownLines()).toHaveLength(1);
    expect(within(region()).getByText('Fast synch', { selector: 'mark' })).toBeTruthy();
    expect(within(region()).getByTestId('logs-status').textContent).toContain('1 of 5 lines match');
    fireEvent.click(within(region()).getByRole('button', { name: 'Copy' }));
    await waitFor(() => expect(writeText).toHaveBeenCalledWith(`${lines[3]}\n`));
    expect(within(region()).getByTestId('logs-status').textContent).toContain('Copied 1 line');
  });

  it(`draws at most ${LOG_SHOWN_LINES} lines however many arrive, the newest`, async () => {
    const r = await openPanel();
    send(
      r,
      'llama-1',
      Array.from({ length: 3_000 }, (_, i) => `line ${i}`),
    );
    await waitFor(() => expect(shownLines()).toHaveLength(LOG_SHOWN_LINES));
    expect(shownLines().at(-1)!.textContent).toBe('line 2999');
    expect(within(region()).getByTestId('logs-status').textContent).toContain(`showing the newest ${LOG_SHOWN_LINES} of 3000 matching lines`);
  });

  it('switches logs (the old one stops), and says when a stream ends with a way to follow again', async () => {
    const r = await openPanel();
    fireEvent.change(within(region()).getByRole('combobox', { name: 'Log' }), { target: { value: 'exobar' } });
    await waitFor(() => expect(follower(r, 'exobar')).toHaveLength(1));
    expect(follower(r, 'llama-1')).toHaveLength(0);
    act(() => r.bridge.log('exobar', { kind: 'ended', message: 'the server closed the log stream' }));
    expect(within(region()).getByTestId('logs-status').textContent).toContain('Stopped: the server closed the log stream');
    fireEvent.click(within(region()).getByRole('button', { name: 'Follow again' }));
    await waitFor(() => expect(r.bridge.followed.filter((f) => f.source === 'exobar')).toHaveLength(2));
  });

  it("a card's Log button and the tray's Open log open the view at that model's log", async () => {
    const r = renderApp(snapshot({ instances: [instance({ id: 'llama-1' }), instance({ id: 'llama-2', modelName: 'Other' })] }));
    r.bridge.logSources = [...SOURCES, { ...SOURCES[0]!, id: 'llama-2', instanceId: 'llama-2', title: 'Other: runner log' }];
    fireEvent.click(screen.getByRole('button', { name: 'Log of Other' }));
    await waitFor(() => expect(follower(r, 'llama-2')).toHaveLength(1));
    expect(within(region()).getByRole('button', { name: /^Logs/ }).getAttribute('aria-expanded')).toBe('true');
    act(() => r.bridge.openLog('llama-1'));
    await waitFor(() => expect(follower(r, 'llama-1')).toHaveLength(1));
    expect(follower(r, 'llama-2')).toHaveLength(0);
  });
});
