/**
 * What the views ask of this Mac's exo (the popover's Start, Stop and Restart), as one
 * request both bridges carry: IPC validates it with this schema in main; the HTTP
 * bridge sends it to `POST /api/exo/process/{start,stop,restart}`.
 */
import { z } from 'zod';
import { ExoProcessRestartBodySchema, ExoProcessStartBodySchema } from './exo-fast-synch';

export const ExoProcessControlSchema = z.discriminatedUnion('action', [
  ExoProcessStartBodySchema.extend({ action: z.literal('start') }),
  z.strictObject({ action: z.literal('stop') }),
  ExoProcessRestartBodySchema.extend({ action: z.literal('restart') }),
]);
export type ExoProcessControl = z.input<typeof ExoProcessControlSchema>;
