// A fake exo runner: what exo's runner bootstrap does that exobar can observe. It logs
// "Fast synch flag: N" (N from EXO_FAST_SYNCH as exo's bootstrap reads it: "false"
// is 0, anything else 1) to stderr and exo.log, then idles until signalled.
// Plain JavaScript so a runner starts in tens of milliseconds.
// argv: <exo.log path> <runner index>. FAKE_EXO_RUNNER_IGNORE_SIGTERM=1 makes it stubborn.
import { appendFileSync } from 'node:fs';

// Signal handlers first: the log line below tells a test the runner is fully up.
const stubborn = process.env.FAKE_EXO_RUNNER_IGNORE_SIGTERM === '1';
process.on('SIGTERM', () => {
  if (!stubborn) process.exit(0);
});
process.on('SIGINT', () => {
  if (!stubborn) process.exit(0);
});
const [logFile, index] = process.argv.slice(2);
const flag = process.env.EXO_FAST_SYNCH === 'false' ? 0 : 1;
const line = `[ ${new Date().toISOString().slice(11, 23)} | INFO     ] runner ${index} pid=${process.pid}: Fast synch flag: ${flag}\n`;
process.stderr.write(line);
if (logFile) appendFileSync(logFile, line);
// Tell the fake exo this runner is up, then let go of the channel: exo may exit and leave it.
process.send?.('up');
process.disconnect?.();

setInterval(() => undefined, 60_000);
