/**
 * zod without its compiled parsers. zod 4 probes `new Function('')` once to decide
 * whether it may compile object parsers; the page's Content-Security-Policy forbids
 * eval, so the probe fails (zod falls back) and Chromium reports a CSP violation for it.
 * jitless skips the probe. It must run before the first schema is built (zod reads the
 * setting at construction), so main.tsx imports this module first.
 */
import { z } from 'zod';

z.config({ jitless: true });
