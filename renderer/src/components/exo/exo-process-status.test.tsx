import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { EXO_STATES, exoProcessState } from '../../../../test/support/exo-process-fixture';
import { exoInstanceFixture } from '../../../../test/support/exo-snapshot-fixture';
import { snapshot } from '../../../../test/support/renderer/fixtures';
import { renderApp } from '../../../../test/support/renderer/render-app';
import { ExoProcessStatus } from './exo-process-status';

afterEach(cleanup);

const section = () => screen.getByRole('region', { name: "This Mac's exo" });
const summary = () => screen.getByTestId('exo-process-summary').textContent;
const button = (name: string | RegExp) => within(section()).queryByRole('button', { name });

describe("this Mac's exo in the popover", () => {
  it('is not shown while exobar has not started exo', () => {
    renderApp(snapshot({ exoProcess: null }), {}, <ExoProcessStatus />);
    expect(screen.queryByTestId('exo-process')).toBeNull();
  });

  it('says each of its own states in words', () => {
    const { push } = renderApp(snapshot({ exoProcess: EXO_STATES.starting() }), {}, <ExoProcessStatus />);
    expect(summary()).toBe("starting: waiting for exo's API (http://127.0.0.1:52415/node_id)");
    expect(button('Stop exo')).not.toBeNull();
    push(snapshot({ seq: 2, exoProcess: EXO_STATES.running() }));
    expect(summary()).toBe('running (pid 4242), fast synch off');
    expect(screen.getByTestId('exo-process-fast-synch').textContent).toBe('Fast synch off, set by exobar: ring only (2 instances): off');
    expect(screen.queryByTestId('exo-process-last-lines')).toBeNull();
    push(snapshot({ seq: 3, exoProcess: EXO_STATES.stopping() }));
    expect(summary()).toBe('stopping: asking exo to stop (SIGINT)');
    expect(within(section()).queryAllByRole('button')).toEqual([]);
    push(snapshot({ seq: 4, exoProcess: EXO_STATES.stopped() }));
    expect(section().dataset.status).toBe('stopped');
    expect(screen.getByTestId('exo-process-reason').textContent).toBe('stopped by exobar (SIGINT, graceful)');
    expect(button('Start exo')).not.toBeNull();
  });

  it("a crash shows the exit, the reason and exo's last lines, and offers a start", () => {
    const { bridge } = renderApp(snapshot({ exoProcess: EXO_STATES.crashed() }), {}, <ExoProcessStatus />);
    expect(summary()).toBe('crashed (exit code 1)');
    expect(screen.getByRole('alert').textContent).toMatch(/exited during start \(exit code 1\) before its API answered/);
    expect(screen.getByLabelText("exo's last lines").textContent).toContain('ModuleNotFoundError: No module named mlx');
    fireEvent.click(button('Start exo')!);
    expect(bridge.controlExoProcess).toHaveBeenCalledWith({ action: 'start' });
  });

  it('needs_attention says why (the GPU may be wedged) and that nothing restarts on its own', () => {
    renderApp(snapshot({ exoProcess: EXO_STATES.needsAttention() }), {}, <ExoProcessStatus />);
    expect(summary()).toBe('needs attention (exit code 1)');
    expect(screen.getByRole('alert').textContent).toMatch(/the GPU may be wedged.*reboot the Mac if it stays busy.*will not restart exo on its own/);
    expect(screen.getByLabelText("exo's last lines").textContent).toContain('runner 0 stopped answering');
    expect(button('Start exo again')).not.toBeNull();
  });

  it('an automatic restart on its way says which one', () => {
    renderApp(snapshot({ exoProcess: EXO_STATES.restarting() }), {}, <ExoProcessStatus />);
    expect(screen.getByTestId('exo-process-restarts').textContent).toBe('Automatic restart 1 of 5');
    expect(screen.getByTestId('exo-process-reason').textContent).toBe('exo exited on its own (exit code 1)');
  });

  it('Restart asks for consent in words, naming the instances that span this Mac, and restarts only then', async () => {
    // The exo instance has a runner on node 12D3KooWA: this Mac's exo, by its node id.
    const exo = exoProcessState({ nodeId: '12D3KooWA' });
    const { bridge } = renderApp(snapshot({ instances: [exoInstanceFixture()], exoProcess: exo }), {}, <ExoProcessStatus />);
    fireEvent.click(button('Restart…')!);
    const dialog = screen.getByRole('alertdialog', { name: 'Restart exo?' });
    expect(dialog.textContent).toMatch(/A restart deletes every instance that spans this Mac .*: Llama 3\.3 70B\./);
    fireEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(bridge.controlExoProcess).not.toHaveBeenCalled();
    expect(screen.queryByRole('alertdialog')).toBeNull();

    fireEvent.click(button('Restart…')!);
    fireEvent.click(within(screen.getByRole('alertdialog')).getByRole('button', { name: 'Restart exo and delete them' }));
    expect(bridge.controlExoProcess).toHaveBeenCalledWith({ action: 'restart', consent: true });
    await waitFor(() => expect(screen.queryByRole('alertdialog')).toBeNull());
  });

  it('says when no instance spans this Mac, and a refused restart becomes the notice', async () => {
    const { bridge, store } = renderApp(snapshot({ exoProcess: EXO_STATES.running() }), {}, <ExoProcessStatus />);
    bridge.controlExoProcess.mockRejectedValueOnce(Object.assign(new Error('exo must restart to turn fast synch on'), { code: 'exo_restart_required' }));
    fireEvent.click(button('Restart…')!);
    expect(screen.getByRole('alertdialog').textContent).toMatch(/No instance spans this Mac now\./);
    fireEvent.click(within(screen.getByRole('alertdialog')).getByRole('button', { name: /Restart exo/ }));
    await waitFor(() => expect(store.getState().notice).toMatchObject({ kind: 'error', message: 'exo must restart to turn fast synch on' }));
  });

  it("shows exo's own log disagreeing with exobar's value", () => {
    const exo = exoProcessState({ fastSynch: { enabled: false, reason: 'ring only (1 instance): off', observed: true, mismatch: true } });
    renderApp(snapshot({ exoProcess: exo }), {}, <ExoProcessStatus />);
    expect(screen.getByTestId('exo-process-fast-synch').textContent).toBe("Fast synch off, set by exobar: ring only (1 instance): off · exo's own log says ON");
  });
});
