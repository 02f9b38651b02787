/**
 * Starts the app's glue against the fake Electron (the test file mocks 'electron')
 * with a fake core and recording core services, and finds tray menu entries.
 */
import pino from 'pino';
import { vi } from 'vitest';
import type { CoreServices } from '../../../electron/main/core-services';
import { startExobarApp, type ExobarAppOptions } from '../../../electron/main/exobar-app';
import { fake } from './fake-electron';
import { fakeStartCore, type FakeCore } from './fake-core';
import { sleep } from '../eventually';

export const silent = pino({ level: 'silent' });

/** Core services that record their calls; the bundle is written as a tiny file. */
export function recordingServices(): CoreServices & Record<string, ReturnType<typeof vi.fn>> {
  return {
    planSafePair: vi.fn(async () => ({ models: [], memory: { requiredBytes: 0, freeBytes: 0, headroomBytes: 0 }, blockers: [], canRun: true })),
    launchSafePair: vi.fn(async () => undefined),
    writeDiagnosticBundle: vi.fn(async (file: string) => (await import('node:fs')).writeFileSync(file, 'zip')),
    startMlxSetup: vi.fn(() => undefined),
    refreshMlxRuntime: vi.fn(async () => undefined),
    controlExoProcess: vi.fn(async () => undefined),
  };
}

/** Starts the app with a fake core; resolves once the tray is up. */
export async function startApp(extra: Partial<ExobarAppOptions> = {}) {
  const cores = fakeStartCore();
  const svc = recordingServices();
  const exobar = await startExobarApp({
    mainDir: '/app/out/main',
    startCore: cores.startCore,
    createServices: () => svc,
    logger: silent,
    handleSignals: false,
    stopDeadlineMs: 200,
    ...extra,
  });
  const core = cores.started.at(-1)?.core as FakeCore;
  return { exobar: exobar!, core, cores, svc };
}

/** The tray menu's entry whose label starts with `label`. */
export function menuItem(label: string) {
  const item = fake.trays[0]!.menu!.items.find((i) => typeof i.label === 'string' && i.label.startsWith(label));
  if (!item) throw new Error(`no menu item ${label}`);
  return item as { label: string; click: (item: { checked?: boolean }) => void; checked?: boolean; enabled?: boolean };
}

export const flush = () => sleep(10);
