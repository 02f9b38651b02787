#!/usr/bin/env node
// The `exobar` command: runs the TypeScript CLI (electron/cli.ts) through tsx, so
// `npx exobar` and `npm run serve` work straight from the source tree, no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../electron/cli.ts');
const code = await main(process.argv.slice(2));
process.exitCode = code;
// Everything is stopped by now; do not let a stray handle keep the process alive.
setTimeout(() => process.exit(code), 2000).unref();
