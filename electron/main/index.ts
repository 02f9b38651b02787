/**
 * The Electron main process entry (built to out/main/index.js). Everything happens in
 * exobar-app.ts; this file only knows where the build put it.
 */
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startExobarApp } from './exobar-app';

startExobarApp({ mainDir: dirname(fileURLToPath(import.meta.url)) }).catch((error: unknown) => {
  // startExobarApp already told the user and exits; this is for a terminal in development.
  console.error('exobar:', error);
});
