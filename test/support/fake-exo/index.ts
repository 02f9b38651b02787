/**
 * The fake exo's one entry module: what the tests, the bench and the `exo` command
 * (fake-exo-exe) use of it. Only the fake exo's own files import its other modules (a
 * lint rule, test/lint/one-test-convention.test.ts, keeps it so): one fake of exo, one
 * door into it, so a test cannot build its exo from a private corner that the others
 * do not share. `npm run fake-exo` (`cli.ts`, the fake in a process of its own) uses it too.
 */

// The cluster a test moves through time, and the HTTP server that answers exo's routes over it.
export { FakeExoCluster, STOPPED_NODE_REMOVAL_MS } from './fake-cluster';
export { startFakeExo, type FakeExo } from './fake-exo-server';
export type { FaultKind } from './faults';
export { snakeCaseKeys } from './render-state';
export { startFakeDownload, type FakeDownload } from './fake-downloads';

// Ready-made clusters and the models they place.
export { CARDS_PER_NODE, GPT_OSS_20B, LLAMA_1B, LLAMA_3B, QWEN_30B, benchCluster, demoCluster, demoTick, startedMacCluster } from './scenarios';
export { TINY, TINY_B, twoNodeCluster } from './two-node-scenario';
export { startStudioB, type StudioB } from './split-scenario';

// The serving exo (chat completions from a fake worker) and reading its streams.
export { startServingExo, stallCluster, type ServingExo, type ServingExoOptions } from './worker/serving-exo';
export type { WorkerMode } from './worker/fake-worker';
export { firstTokenMs, readTimedLines, type TimedLine } from './worker/sse-lines';
export { streamChatText } from './stream-chat';

// The fake in a child process (the bench, and tests of `npm run fake-exo`).
export { startFakeExoProcess, startServingExoProcess, type FakeExoProcess } from './fake-exo-process';

// exo's fixtures and the real captures, to hold exobar and the fake to what exo sends.
export { FIXTURE_DIR, STATE_FIXTURES, modelCard, readFixture, type Json } from './fixture-data';
export { readReal, readRealText } from './real-captures';

// Proxies between exobar and the fake, to record or hold what passes.
export { startRecordingProxy, type RecordingProxy } from './recording-proxy';
export { startHeldAnswerProxy, type HeldAnswerProxy } from './held-answer-proxy';

// exobar attached to the fake: the monitor, the snapshots the real mapper makes, a pair plan.
export { attachToFake, type AttachHarness } from './attach-harness';
export { mappedExoSnapshot, viewScenarios } from './mapped-snapshot';
export { proxiedSnapshot } from './proxied-snapshot';
export { ghostSnapshot } from './ghost-snapshot';
export { downloadsSnapshot } from './downloads-snapshot';
export { oneMacPairPlan } from './one-mac-pair-plan';
