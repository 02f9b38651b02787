import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { ModelEventRecord, RequestRecord } from '../../../../shared/request-record';
import { instance, snapshot } from '../../../../test/support/renderer/fixtures';
import { renderApp } from '../../../../test/support/renderer/render-app';
import { RequestsPanel, requestsMarkdown } from './requests-panel';

afterEach(cleanup);

const base: RequestRecord = {
  id: 'chatcmpl-a',
  at: Date.UTC(2026, 11, 1, 10, 0, 0),
  endedAt: Date.UTC(2026, 11, 1, 10, 0, 2),
  model: 'sim/llama-3.2-1b',
  instance: 'llama-3.2-1b-1',
  source: 'local',
  node: 'mac',
  client: 'curl/8',
  api: 'openai-chat',
  promptTokens: 100,
  cachedTokens: null,
  outputTokens: 20,
  ttftMs: 300,
  loadMs: null,
  waitMs: 50,
  runnerWaitMs: null,
  prefillMs: 200,
  firstTokenMs: 50,
  prefillTokensPerSecond: 500,
  decodeTokensPerSecond: 40,
  itlP95Ms: 30,
  outcome: 'done',
  cancelledBy: null,
  errorCode: null,
};
const rows: RequestRecord[] = [
  base,
  { ...base, id: 'exo-b', source: 'exo', model: 'exo:llama', ttftMs: 900, outcome: 'failed', errorCode: 'exo_unreachable', at: base.at + 1000 },
  { ...base, id: 'chatcmpl-c', ttftMs: 100, outcome: 'cancelled', cancelledBy: 'client_disconnect', at: base.at + 2000, itlP95Ms: null },
];

const events: ModelEventRecord[] = [
  {
    kind: 'model_event',
    at: base.at + 30_000,
    model: 'sim/llama-3.2-1b',
    instance: 'llama-3.2-1b-1',
    event: 'unload',
    reason: 'idle 30 min',
    durationMs: null,
  },
  {
    kind: 'model_event',
    at: base.at - 1000,
    model: 'exo:llama',
    instance: 'e-1',
    event: 'load',
    reason: 'placed on exo on demand for a request',
    durationMs: 4200,
  },
  {
    kind: 'model_event',
    at: base.at - 2000,
    model: 'sim/llama-3.2-1b',
    instance: 'llama-3.2-1b-1',
    event: 'load',
    reason: 'on demand for a request',
    durationMs: 520,
  },
];

async function open() {
  const rendered = renderApp(undefined, {}, <RequestsPanel />);
  rendered.bridge.requests = { requests: rows, events, total: 3, diskBytes: 2048, diskCapBytes: 16 * 1024 * 1024, problem: null };
  fireEvent.click(within(screen.getByRole('region', { name: 'Requests' })).getByRole('button', { name: /^Requests/ }));
  await waitFor(() => expect(screen.getAllByTestId('request-row')).toHaveLength(3));
  return rendered;
}
const ids = () => screen.getAllByTestId('request-row').map((r) => r.textContent);

describe('Requests view', () => {
  it('counts in the singular when there is one: "1 token", "1 request kept"', async () => {
    const rendered = renderApp(undefined, {}, <RequestsPanel />);
    const one = { ...base, promptTokens: 1, outputTokens: 1 };
    rendered.bridge.requests = { requests: [one], events: [], total: 1, diskBytes: 2048, diskCapBytes: 16 * 1024 * 1024, problem: null };
    fireEvent.click(within(screen.getByRole('region', { name: 'Requests' })).getByRole('button', { name: /^Requests/ }));
    await waitFor(() => expect(screen.getAllByTestId('request-row')).toHaveLength(1));
    expect(screen.getByTestId('requests-disk').textContent).toMatch(/^1 request kept/);
    fireEvent.click(screen.getAllByTestId('request-row')[0]!);
    const timeline = screen.getByTestId('request-timeline').textContent ?? '';
    expect(timeline).toContain('prefill 200 ms (1 token, 500 tok/s)');
    expect(timeline).toContain('(1 token) · ended');
    expect(timeline).not.toContain('1 tokens');
  });

  it('lists the log newest first, sorts by a column, filters, and a row opens its timeline', async () => {
    await open();
    expect(ids()[0]).toContain('cancelled (client disconnect)');
    expect(ids()[1]).toContain('failed (exo_unreachable)');
    // Unknown is shown as unknown, never as zero.
    expect(ids()[0]).toContain('—');
    const ttfts = () => ids().map((t) => /(\d+) ms/.exec(t!)?.[1]);
    fireEvent.click(screen.getByRole('button', { name: 'TTFT' }));
    expect(ttfts()).toEqual(['100', '300', '900']);
    fireEvent.click(screen.getByRole('button', { name: /^TTFT/ }));
    expect(ttfts()).toEqual(['900', '300', '100']);
    fireEvent.change(screen.getByRole('combobox', { name: 'Source' }), { target: { value: 'exo' } });
    expect(ids()).toHaveLength(1);
    fireEvent.change(screen.getByRole('combobox', { name: 'Source' }), { target: { value: '' } });
    fireEvent.change(screen.getByRole('combobox', { name: 'Outcome' }), { target: { value: 'done' } });
    expect(ids()).toHaveLength(1);
    fireEvent.click(screen.getAllByTestId('request-row')[0]!);
    const timeline = screen.getByTestId('request-timeline');
    expect(timeline.textContent).toContain('wait 50 ms');
    expect(timeline.textContent).toContain('prefill 200 ms (100 tokens, 500 tok/s)');
    // The columns the popover hides are said in the timeline.
    expect(timeline.textContent).toContain('chatcmpl-a · local ·');
    expect(timeline.textContent).toContain('sent by “curl/8”');
    // "client node" read as a kind of Mac when Node's fetch sent the request: the field is the client's own name.
    expect(timeline.textContent).not.toContain('client curl/8');
    // The same 24-hour time as the rows, not a second format.
    expect(timeline.textContent).toMatch(/arrived \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} ·/);
    expect(screen.getByTestId('requests-disk').textContent).toContain('of 16.0 MiB on disk');
  });

  it("shows the models' loads and unloads beside the requests, of the model chosen, and a request's load part", async () => {
    await open();
    const lines = () => screen.getAllByTestId('model-event').map((e) => e.textContent);
    expect(lines()).toHaveLength(3);
    expect(lines()[0]).toMatch(/sim\/llama-3.2-1b unloaded · idle 30 min$/);
    expect(lines()[1]).toMatch(/exo:llama loaded in 4.20 s · placed on exo on demand for a request$/);
    expect(lines()[2]).toMatch(/sim\/llama-3.2-1b loaded in 520 ms · on demand for a request$/);
    fireEvent.change(screen.getByRole('combobox', { name: 'Model' }), { target: { value: 'exo:llama' } });
    expect(lines()).toHaveLength(1);
    cleanup();
    const rendered = renderApp(undefined, {}, <RequestsPanel />);
    rendered.bridge.requests = {
      requests: [{ ...base, ttftMs: 820, loadMs: 520, waitMs: 50 }],
      events: [],
      total: 1,
      diskBytes: 0,
      diskCapBytes: 1,
      problem: null,
    };
    fireEvent.click(within(screen.getByRole('region', { name: 'Requests' })).getByRole('button', { name: /^Requests/ }));
    fireEvent.click(await screen.findByTestId('request-row'));
    expect(screen.getByTestId('request-timeline').textContent).toContain('model load 520 ms · wait 50 ms');
    expect(screen.queryByTestId('model-events')).toBeNull();
  });

  it('keeps the heading\'s count live while collapsed: read again whenever a request ends', async () => {
    const served = (completed: number) => snapshot({ instances: [instance({ counters: { completed, failed: 0, cancelled: 0, rejected: 0 } })] });
    const rendered = renderApp(undefined, {}, <RequestsPanel />);
    rendered.bridge.requests = { requests: [], events: [], total: 19, diskBytes: 0, diskCapBytes: 1, problem: null };
    rendered.push(served(19));
    await waitFor(() => expect(screen.getByTestId('requests-logged').textContent).toBe('19 logged'));
    rendered.bridge.requests = { requests: [], events: [], total: 108, diskBytes: 0, diskCapBytes: 1, problem: null };
    rendered.push(served(108));
    await waitFor(() => expect(screen.getByTestId('requests-logged').textContent).toBe('108 logged'));
    expect(screen.getByRole('button', { name: /^Requests/ }).getAttribute('aria-expanded')).toBe('false');
  });

  it('exports a markdown table of the rows shown', () => {
    const md = requestsMarkdown(rows).trim().split('\n');
    expect(md[0]).toBe('| Time | Model | Source | Outcome | TTFT | Prefill tok/s | Decode tok/s | ITL p95 | Out tok |');
    expect(md).toHaveLength(5);
    expect(md[3]).toContain('failed (exo_unreachable)');
  });
});
