#!/usr/bin/env node
// `npm start`: builds and launches the Electron app, or, where the Electron binary is
// missing (no internet to download it), says so in one line and runs `exobar serve`.
// The logic is TypeScript in scripts/start/, run through tsx like bin/exobar.js.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('./start/run-start.ts');
process.exitCode = await main(process.argv.slice(2));
