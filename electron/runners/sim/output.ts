/**
 * The runner's stdout: one RunnerOutput JSON object per line, validated before it is
 * written so the sim can never send what the protocol forbids.
 */
import { RunnerOutputSchema, type Chunk, type RunnerOutput, type RunnerStatus, type TaskStatus } from '../../../shared/runner-protocol';

export class RunnerOutputWriter {
  private silenced = false;

  constructor(private readonly stream: NodeJS.WritableStream) {}

  emit(message: RunnerOutput): void {
    if (this.silenced) return;
    this.stream.write(`${JSON.stringify(RunnerOutputSchema.parse(message))}\n`);
  }

  acknowledged(taskId: string): void {
    this.emit({ type: 'TaskAcknowledged', taskId });
  }

  taskStatus(taskId: string, status: TaskStatus): void {
    this.emit({ type: 'TaskStatusUpdated', taskId, status });
  }

  runnerStatus(status: RunnerStatus): void {
    this.emit({ type: 'RunnerStatusUpdated', status });
  }

  chunk(commandId: string, chunk: Chunk): void {
    this.emit({ type: 'ChunkGenerated', commandId, chunk });
  }

  /** From now on nothing reaches stdout (the hang fault: a wedged runner says nothing). */
  silence(): void {
    this.silenced = true;
  }

  /** Resolves once everything written so far has been handed to the OS (pipes are async on macOS). */
  flush(): Promise<void> {
    return new Promise((resolve) => {
      if (!this.stream.write('', () => resolve())) this.stream.once('drain', () => resolve());
    });
  }
}
