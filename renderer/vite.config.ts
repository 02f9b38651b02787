// Builds the renderer as a static page: `exobar serve` serves out/renderer at `/`, and
// the Electron build reuses src/main.tsx through electron-vite. `base: './'` keeps
// every asset URL relative so the same files load from file:// and from http://.
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: './',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../out/renderer', import.meta.url)),
    emptyOutDir: true,
    // The popover must open fast from disk; one chunk, no source maps shipped.
    sourcemap: false,
    // React, recharts and zod make one ~700 kB chunk; it loads from disk or loopback,
    // where splitting it would only add round trips.
    chunkSizeWarningLimit: 1000,
  },
});
