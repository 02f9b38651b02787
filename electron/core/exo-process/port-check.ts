/**
 * Is exo's API port free? Checked before exo starts so "port taken" is said in words
 * instead of read from a Python traceback. Two probes, because either alone misses a
 * case: a connection to 127.0.0.1 finds any listener that accepts (whatever address it
 * bound), and binding 0.0.0.0, the address exo binds, finds a listener on another
 * interface.
 */
import { connect, createServer } from 'node:net';

function accepts(port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    const done = (answer: boolean): void => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

function bindFails(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'EADDRINUSE'));
    // exclusive: no cluster sharing; the probe closes at once.
    server.listen({ port, host: '0.0.0.0', exclusive: true }, () => server.close(() => resolve(false)));
  });
}

/** True when something already listens on `port` (exo could not bind it). */
export async function portInUse(port: number, timeoutMs = 500): Promise<boolean> {
  return (await accepts(port, timeoutMs)) || (await bindFails(port));
}
