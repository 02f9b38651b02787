import { act, cleanup, fireEvent, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { instance, prefillingInstance, snapshot } from '../../../../test/support/renderer/fixtures';
import { renderApp } from '../../../../test/support/renderer/render-app';
import { BridgeError } from '../../bridge/bridge-error';

afterEach(cleanup);

const busy = prefillingInstance(); // 5 requests in flight
const idle = instance();

describe('stop confirmation', () => {
  it('asks before stopping a model with requests in flight, says how many end, then sends the stop confirmed', async () => {
    const { bridge } = renderApp(snapshot({ instances: [idle, busy] }));
    fireEvent.click(screen.getByRole('button', { name: `Stop ${busy.modelName}` }));
    const dialog = screen.getByRole('alertdialog', { name: `Stop ${busy.modelName}?` });
    expect(within(dialog).getByTestId('stop-confirmation-count').textContent).toContain('5 requests will end');
    expect(bridge.stopInstance).not.toHaveBeenCalled();
    expect(document.activeElement?.textContent).toBe('Keep running');
    await act(async () => fireEvent.click(within(dialog).getByRole('button', { name: 'Stop anyway' })));
    expect(bridge.stopInstance).toHaveBeenCalledExactlyOnceWith(busy.id, { confirm: true });
    expect(screen.queryByRole('alertdialog')).toBeNull();
    expect(screen.queryByTestId('notice')).toBeNull();
  });

  it('"Keep running" (or Escape) stops nothing', () => {
    const { bridge } = renderApp(snapshot({ instances: [busy] }));
    fireEvent.click(screen.getByRole('button', { name: `Stop ${busy.modelName}` }));
    fireEvent.click(screen.getByRole('button', { name: 'Keep running' }));
    expect(screen.queryByRole('alertdialog')).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Stop all' }));
    expect(screen.getByRole('alertdialog', { name: 'Stop all models?' })).toBeTruthy();
    fireEvent.keyDown(window, { key: 'Escape' });
    expect(screen.queryByRole('alertdialog')).toBeNull();
    expect(bridge.stopInstance).not.toHaveBeenCalled();
    expect(bridge.stopAll).not.toHaveBeenCalled();
  });

  it('stops a model without requests at once, unconfirmed', () => {
    const { bridge } = renderApp(snapshot({ instances: [idle, busy] }));
    fireEvent.click(screen.getByRole('button', { name: `Stop ${idle.modelName}` }));
    expect(screen.queryByRole('alertdialog')).toBeNull();
    expect(bridge.stopInstance).toHaveBeenCalledWith(idle.id, undefined);
  });

  it("Stop all counts every model's requests and sends the confirmation", async () => {
    const { bridge } = renderApp(snapshot({ instances: [idle, busy] }));
    fireEvent.click(screen.getByRole('button', { name: 'Stop all' }));
    const dialog = screen.getByRole('alertdialog', { name: 'Stop all models?' });
    expect(dialog.textContent).toContain('5 requests will end');
    await act(async () => fireEvent.click(within(dialog).getByRole('button', { name: 'Stop all anyway' })));
    expect(bridge.stopAll).toHaveBeenCalledExactlyOnceWith({ confirm: true });
  });

  it("a 409 requests_in_flight (a request arrived after the snapshot) becomes the question with the server's count, never an error notice", async () => {
    const { bridge } = renderApp(snapshot({ instances: [idle] }));
    bridge.stopInstance.mockRejectedValueOnce(new BridgeError('2 requests will end if this model stops', 'requests_in_flight', 2));
    await act(async () => fireEvent.click(screen.getByRole('button', { name: `Stop ${idle.modelName}` })));
    const dialog = screen.getByRole('alertdialog');
    expect(dialog.textContent).toContain('2 requests will end');
    expect(screen.queryByTestId('notice')).toBeNull();
    await act(async () => fireEvent.click(within(dialog).getByRole('button', { name: 'Stop anyway' })));
    expect(bridge.stopInstance).toHaveBeenLastCalledWith(idle.id, { confirm: true });
  });

  it("the IPC bridge's refusal (code only, no count) asks too, with at least one request", async () => {
    const { bridge } = renderApp(snapshot({ instances: [idle] }));
    bridge.stopAll.mockRejectedValueOnce(Object.assign(new Error('1 request will end if these models stop'), { code: 'requests_in_flight' }));
    await act(async () => fireEvent.click(screen.getByRole('button', { name: 'Stop all' })));
    expect(screen.getByRole('alertdialog').textContent).toContain('1 request will end');
  });
});
