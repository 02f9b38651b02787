import type { InstanceSnapshot } from '../../../../shared/snapshot';
import { isDownForGood } from '../../../../shared/instance-state';
import { runnerLogSource } from '../../../../shared/logs';
import { useActions, useExobar } from '../../store/store-context';
import { FastSynchRow } from './fast-synch-row';
import { InstanceTypeWord } from '../common/instance-type-word';
import { PacingBaselineRow, PacingRow } from './pacing-row';
import { RunnerEngineRow } from './runner-engine-row';
import { PendingCancels } from './pending-cancels';
import { PrefillProgress } from './prefill-progress';
import { QueueList } from './queue-list';
import { ResidencyRow } from './residency-row';
import { RunnerStatusRow } from './runner-status-row';
import { StopButton } from '../stop/stop-button';
import { SharingLine } from './sharing-line';
import { Throughput } from './throughput';
import { TtftPanel } from './ttft-panel';

/**
 * Everything about one model instance: runner, policy, queue, prefill, cancels, TTFT,
 * throughput. The runner, fast-synch and counter rows are a local runner's; an exo
 * instance shows the parts every instance has (its own view comes with the exo views).
 */
export function InstanceCard({ instance }: { instance: InstanceSnapshot }) {
  const { retryInstance, openLog } = useActions();
  const retrying = useExobar((s) => s.busy[`retry:${instance.id}`] === true);
  const local = instance.source === 'local' ? instance : null;
  const shuttingDown = local?.runner.status.kind === 'RunnerShuttingDown';
  // Down for good: only the operator brings it back (runner.state, never the wording).
  const retryable = isDownForGood(instance);
  return (
    <section className="card" aria-label={instance.modelName} data-testid="instance-card" data-instance={instance.id}>
      <header className="card-header">
        <div className="card-title">
          <h2>{instance.modelName}</h2>
          <div className="badges">
            <InstanceTypeWord type={instance.instanceType} badge />
            {local ? (
              <span className={`badge ${local.simulated ? 'sim' : ''}`}>{local.simulated ? 'simulated' : local.engine.toUpperCase()}</span>
            ) : (
              <span className="badge">exo</span>
            )}
          </div>
        </div>
        {retryable && (
          <button
            type="button"
            className="button small"
            aria-label={`Retry ${instance.modelName}`}
            disabled={retrying}
            onClick={() => void retryInstance(instance.id)}
          >
            {retrying ? 'Retrying…' : 'Retry'}
          </button>
        )}
        {local && (
          <button
            type="button"
            className="button small"
            aria-label={`Log of ${instance.modelName}`}
            title="Follow this model's runner log live"
            onClick={() => openLog(runnerLogSource(instance.id))}
          >
            Log
          </button>
        )}
        <StopButton instanceId={instance.id} modelName={instance.modelName} shuttingDown={shuttingDown} />
      </header>
      {local && <RunnerStatusRow instance={local} />}
      {local && <FastSynchRow instance={local} />}
      {local && <ResidencyRow instance={local} />}
      {instance.prefill && <PrefillProgress prefill={instance.prefill} />}
      {local?.pacing && <PacingRow pacing={local.pacing} />}
      {local?.runnerEngine && <RunnerEngineRow engine={local.runnerEngine} />}
      {local?.pacingWaitingForBaseline && <PacingBaselineRow />}
      <QueueList requests={instance.queue.requests} capacity={instance.queue.capacity} />
      <PendingCancels cancels={instance.pendingCancels} />
      <TtftPanel instanceId={instance.id} ttft={instance.ttft} />
      <SharingLine sharing={instance.sharing} />
      <footer className="row small muted card-footer">
        <Throughput tokensPerSecond={instance.tokensPerSecond} />
        <span className="spacer" />
        {local && (
          <span className="tabular">
            {local.counters.completed} done · {local.counters.cancelled} cancelled · {local.counters.failed} failed
          </span>
        )}
      </footer>
    </section>
  );
}
