/**
 * Where each line of a runner goes: its hello and the answers to lifecycle tasks to the
 * start flow (lifecycle-tasks.ts), the answers to generation tasks to the ledger's side
 * (generation-tasks.ts), the rest straight out as events. Every line also feeds the
 * watchdog: the silence before it is the step the rates learn from.
 */
import type { RunnerOutput, RunnerStatus } from '../../../shared/runner-protocol';
import type { GenerationTasks } from './generation-tasks';
import type { LifecycleTasks } from './lifecycle-tasks';
import type { SupervisorEvent } from './supervisor-events';
import type { Watchdog } from './watchdog';

export interface RunnerMessageTargets {
  lifecycle: LifecycleTasks;
  tasks: GenerationTasks;
  watchdog: Watchdog;
  emit(event: SupervisorEvent): void;
  /** The runner reported its own status. */
  runnerStatus(status: RunnerStatus): void;
  /** A generation task ended and none is left in progress. */
  allTasksEnded(): void;
}

export function routeRunnerMessage(message: RunnerOutput, to: RunnerMessageTargets): void {
  const now = performance.now();
  const sinceLastLineMs = to.watchdog.silentMs(now);
  to.watchdog.outputSeen();
  switch (message.type) {
    case 'Hello':
      to.lifecycle.hello(message);
      return;
    case 'RunnerStatusUpdated':
      to.runnerStatus(message.status);
      return;
    case 'TaskAcknowledged':
      if (!to.lifecycle.acknowledged(message.taskId)) to.tasks.acknowledged(message.taskId);
      return;
    case 'TaskStatusUpdated':
      if (to.lifecycle.statusUpdated(message.taskId, message.status)) return;
      if (to.tasks.statusUpdated(message.taskId, message.status) && to.tasks.inProgress.size === 0) to.allTasksEnded();
      return;
    case 'PromptCacheStats':
      to.emit({ type: 'prompt_cache', stats: message });
      return;
    case 'PrefillPacingApplied': {
      const { pacingId, chunkTokens, pauseMs, commandId } = message;
      to.emit({ type: 'pacing_applied', pacingId, pacing: { chunkTokens, pauseMs }, commandId });
      return;
    }
    case 'ChunkGenerated':
      if (message.chunk.kind === 'ErrorChunk' && to.lifecycle.errorChunk(message.commandId, message.chunk.errorMessage)) return;
      to.tasks.chunk(message.commandId, message.chunk, sinceLastLineMs, now);
      return;
  }
}
