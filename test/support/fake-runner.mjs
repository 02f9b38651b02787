// A scripted runner process for the supervisor's state-machine tests: speaks the runner
// protocol on stdin/stdout and fails the way its first argument says.
//   ok               hello, load, warm up, answer each generation with two tokens
//   exit-before-hello  writes a reason on stderr and exits 1 (an engine that is missing)
//   load-fails       LoadModel fails with the runner's own words, RunnerFailed, exit 1
//   crash-on-generate  exits 1 when a generation arrives
//   hang-on-generate   acknowledges a generation, then stays silent
//   protocol-4       says hello with protocol version 4 (newer than exobar)
//   error-on-generate  ends each generation with its own error chunk and Failed
//   error-then-exit    sends a generation's error chunk, then RunnerFailed, and exits 1
import { createInterface } from 'node:readline';

const mode = process.argv[2] ?? 'ok';
const fastSynch = process.env.MLX_METAL_FAST_SYNCH === '1';
const write = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
const status = (kind, extra = {}) => write({ type: 'RunnerStatusUpdated', status: { kind, ...extra } });
const task = (taskId, s) => write({ type: 'TaskStatusUpdated', taskId, status: s });

if (mode === 'exit-before-hello') {
  process.stderr.write('ModuleNotFoundError: No module named mlx_lm\n');
  process.exit(1);
}
write({
  type: 'Hello',
  protocolVersion: mode === 'protocol-4' ? 4 : 1,
  engine: 'test',
  model: 'fake',
  pid: process.pid,
  env: { MLX_METAL_FAST_SYNCH: process.env.MLX_METAL_FAST_SYNCH ?? null, EXO_FAST_SYNCH: process.env.EXO_FAST_SYNCH ?? null },
  fastSynch,
});
status('RunnerIdle');

let hung = false;
createInterface({ input: process.stdin }).on('line', (line) => {
  if (hung) return;
  const input = JSON.parse(line);
  if (input.kind === 'CancelTask') return;
  write({ type: 'TaskAcknowledged', taskId: input.taskId });
  task(input.taskId, 'Running');
  switch (input.kind) {
    case 'LoadModel':
      if (mode === 'load-fails') {
        const words = 'model not found: /models/missing (no config.json)';
        write({ type: 'ChunkGenerated', commandId: input.taskId, chunk: { kind: 'ErrorChunk', errorMessage: words } });
        task(input.taskId, 'Failed');
        status('RunnerFailed', { errorMessage: words });
        process.exit(1);
      }
      status('RunnerLoaded');
      return task(input.taskId, 'Complete');
    case 'StartWarmup':
      status('RunnerReady');
      return task(input.taskId, 'Complete');
    case 'TextGeneration': {
      if (mode === 'crash-on-generate') process.exit(1);
      if (mode === 'error-on-generate' || mode === 'error-then-exit') {
        write({
          type: 'ChunkGenerated',
          commandId: input.commandId,
          chunk: { kind: 'ErrorChunk', errorMessage: 'prompt of 9000 tokens exceeds the context of 8192' },
        });
        if (mode === 'error-on-generate') return task(input.taskId, 'Failed');
        status('RunnerFailed', { errorMessage: 'Metal: out of memory' });
        process.exit(1);
      }
      if (mode === 'hang-on-generate') {
        hung = true;
        return;
      }
      const token = (text, last) =>
        write({
          type: 'ChunkGenerated',
          commandId: input.commandId,
          chunk: {
            kind: 'TokenChunk',
            text,
            tokenId: 1,
            finishReason: last ? 'length' : null,
            usage: last ? { promptTokens: 1, completionTokens: 2 } : null,
            stats: null,
          },
        });
      token('a', false);
      token('b', true);
      return task(input.taskId, 'Complete');
    }
    case 'Shutdown':
      task(input.taskId, 'Complete');
      status('RunnerShutdown');
      process.exit(0);
  }
});
