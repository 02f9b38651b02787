/** Vitest glue for runner processes: no test leaves a runner behind. */
import { afterEach } from 'vitest';
import { killAllRunnerProcesses } from './runner-under-test';

/** Registers an afterEach that kills every runner process spawned during the test. */
export function useRunnerProcessCleanup(): void {
  afterEach(async () => {
    await killAllRunnerProcesses();
  });
}
