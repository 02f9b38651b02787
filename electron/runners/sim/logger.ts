/** The runner's log: pino JSON lines on stderr (stdout belongs to the protocol). */
import pino from 'pino';

export type Logger = pino.Logger;

/** Synchronous writes, so the last lines before an exit (crash fault, bad args) are never lost. */
export function createRunnerLogger(model: string): Logger {
  return pino({ name: 'sim-runner', base: { pid: process.pid, model } }, pino.destination({ dest: 2, sync: true }));
}
