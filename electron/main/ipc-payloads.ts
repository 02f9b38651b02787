/**
 * The argument list each renderer-to-main channel accepts, as zod tuples built from
 * the shared schemas (shared/api.ts). Main validates every invoke against these
 * before anything reaches the node; extra or missing arguments are refused too. Each
 * tuple must accept exactly what the action's signature in shared/bridge-actions.ts
 * passes (checked by the compiler), so a new action cannot be left unvalidated.
 */
import { z } from 'zod';
import { CreateInstanceRequestSchema, ExoAttachRequestSchema, ResidencyRequestSchema, UpdateInstanceRequestSchema } from '../../shared/api';
import type { BridgeActionArgs, BridgeActionName } from '../../shared/bridge-actions';
import { ExoProcessControlSchema } from '../../shared/exo-process-control';
import { HistoryRangeSchema } from '../../shared/history';
import { LOG_LINES_MAX, LogSourceIdSchema } from '../../shared/logs';
import { RequestOutcomeSchema, RequestSourceSchema } from '../../shared/request-record';
import { IpcChannel } from '../../shared/ipc-channels';
import { SharingCheckRequestSchema } from '../../shared/sharing-check';

const InstanceId = z.string().min(1).max(200);
const RequestId = z.string().min(1).max(200);
const ExoUrl = ExoAttachRequestSchema.shape.url;
const CheckId = z.string().min(1).max(200);
const LostModel = z.string().min(1).max(512);
const StopOptions = z.strictObject({ confirm: z.boolean() });
const RequestFilter = z.strictObject({
  model: z.string().min(1).max(300).optional(),
  source: RequestSourceSchema.optional(),
  outcome: RequestOutcomeSchema.optional(),
  limit: z.number().int().min(1).max(10_000).optional(),
});

/** Channels the renderer invokes (all but the main-to-renderer snapshot push). */
export type InvokeChannelKey = Exclude<keyof typeof IpcChannel, 'snapshot'>;

export const IPC_PAYLOADS = {
  getSnapshot: z.tuple([]),
  getSafePairPlan: z.tuple([]),
  launchSafePair: z.tuple([z.strictObject({ acknowledgeMemory: z.boolean().optional(), acknowledgeRisk: z.boolean().optional() }).optional()]),
  createInstance: z.tuple([CreateInstanceRequestSchema]),
  updateInstance: z.tuple([InstanceId, UpdateInstanceRequestSchema]),
  stopInstance: z.tuple([InstanceId, StopOptions.optional()]),
  retryInstance: z.tuple([InstanceId]),
  unloadInstance: z.tuple([InstanceId]),
  setResidency: z.tuple([InstanceId, ResidencyRequestSchema]),
  stopAll: z.tuple([StopOptions.optional()]),
  cancelRequest: z.tuple([RequestId]),
  exportDiagnostics: z.tuple([]),
  setupMlxRuntime: z.tuple([]),
  refreshMlxRuntime: z.tuple([]),
  listModels: z.tuple([]),
  checkModelFits: z.tuple([]),
  controlExoProcess: z.tuple([ExoProcessControlSchema]),
  probeExo: z.tuple([ExoUrl]),
  attachExo: z.tuple([ExoUrl]),
  detachExo: z.tuple([]),
  placeLostModelAgain: z.tuple([LostModel, z.strictObject({ acknowledgeRisk: z.boolean() }).optional()]),
  dismissLostModel: z.tuple([LostModel]),
  listRequests: z.tuple([RequestFilter.optional()]),
  getHistory: z.tuple([HistoryRangeSchema]),
  startSharingCheck: z.tuple([SharingCheckRequestSchema]),
  getCheck: z.tuple([CheckId]),
  cancelCheck: z.tuple([CheckId]),
  listChecks: z.tuple([]),
  listLogSources: z.tuple([]),
  followLog: z.tuple([LogSourceIdSchema, z.number().int().min(0).max(LOG_LINES_MAX)]),
  unfollowLog: z.tuple([z.number().int().min(0)]),
} as const satisfies Record<InvokeChannelKey, z.ZodTuple> & { [K in BridgeActionName]: z.ZodType<unknown, BridgeActionArgs<K>> };

export type IpcArgs<K extends InvokeChannelKey> = z.output<(typeof IPC_PAYLOADS)[K]>;

/** Validates an invoke's arguments: the parsed tuple, or the problem in words. */
export function parseIpcArgs<K extends InvokeChannelKey>(key: K, args: unknown[]): { ok: true; args: IpcArgs<K> } | { ok: false; message: string } {
  const parsed = IPC_PAYLOADS[key].safeParse(args);
  if (parsed.success) return { ok: true, args: parsed.data as IpcArgs<K> };
  const problems = parsed.error.issues.map((issue) => {
    const [index, ...field] = issue.path;
    const where = index === undefined ? '' : `argument ${Number(index) + 1}${field.length > 0 ? ` field ${field.join('.')}` : ''}: `;
    return `${where}${issue.message}`;
  });
  return { ok: false, message: `Invalid arguments for ${IpcChannel[key]}: ${problems.join('; ')}` };
}
