import type { ExoInstanceDetail, ExoRunnerSnapshot, ExoTaskSnapshot } from '../../../../shared/exo-snapshot';
import type { ExoInstanceSnapshot, RequestSnapshot } from '../../../../shared/snapshot';
import { isServing } from '../../../../shared/instance-state';
import { exoRunnerTone, exoRunnerWords } from '../../../../shared/status-words';
import { shortId } from '../../lib/format';
import { PHASE_LABEL } from '../../lib/runner-status';
import { useExobar } from '../../store/store-context';
import { InstanceTypeWord } from '../common/instance-type-word';
import { LiveAge } from '../common/live-age';
import { ExoPlacedRow } from './exo-placed-row';
import { PrefillProgress } from './prefill-progress';
import { ProgressBar } from '../common/progress-bar';
import { QueueList } from './queue-list';
import { StopButton } from '../stop/stop-button';
import { SharingLine } from './sharing-line';
import { Throughput } from './throughput';
import { TtftPanel } from './ttft-panel';

/** A proxied request still in exobar's queue (the hold) shows as queued: say whose queue it is. */
const proxiedLabel = (request: RequestSnapshot) => (request.phase === 'queued' ? 'Held by exobar' : PHASE_LABEL[request.phase]);

/** One node's shard: node name, rank, status in plain words (exo's tag in the tooltip), exo's diagnostics when failed. */
function RunnerRow({ runner, modelName, at }: { runner: ExoRunnerSnapshot; modelName: string; at: number }) {
  const loading = runner.status === 'RunnerLoading' && runner.layersLoaded !== null && runner.totalLayers !== null;
  return (
    <li className="exo-runner" data-testid="exo-runner" data-status={runner.status} data-node={runner.nodeName ?? runner.nodeId}>
      <div className="row">
        <span className={`dot tone-${exoRunnerTone(runner)}`} aria-hidden="true" />
        <strong className="nowrap" title={`exo node id ${runner.nodeId}`}>
          {runner.nodeLabel}
        </strong>
        <span className="muted small nowrap">rank {runner.rank ?? '?'}</span>
        <span className="status-name ellipsis" data-testid="exo-runner-status" title={`exo: ${runner.status} · runner ${runner.runnerId}`}>
          {exoRunnerWords(runner)}
        </span>
        <span className="spacer" />
        <span className="muted small" title="since exobar saw this status">
          <LiveAge ageMs={Math.max(0, at - runner.statusSince)} />
        </span>
      </div>
      {loading && <ProgressBar value={runner.layersLoaded!} max={runner.totalLayers!} label={`Loading ${modelName} on ${runner.nodeLabel}`} />}
      {runner.diagnostics.length > 0 && (
        <ul className="exo-diagnostics small" aria-label="exo diagnostics">
          {runner.diagnostics.map((d, i) => (
            <li key={`${d.kind}:${i}`} data-testid="exo-diagnostic">
              <code>{d.kind}</code>
              {d.message && <span>: {d.message}</span>}
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}

/**
 * exo's runner goes on generating a request that was cancelled (exo deleted the task
 * before the runner heard of the cancel): it holds the GPU, and the model's next
 * request waits, until the runner is ready again.
 */
function GhostGeneration({ ghost, nodeNames }: { ghost: NonNullable<ExoInstanceDetail['ghostGeneration']>; nodeNames: ExoRunnerSnapshot[] }) {
  const macs = ghost.nodeIds.map((id) => nodeNames.find((r) => r.nodeId === id)?.nodeLabel ?? `node ${id.slice(0, 8)}`).join(', ');
  return (
    <div
      className="row exo-ghost"
      data-testid="exo-ghost-generation"
      title={`exo deleted the cancelled request, but its runner on ${macs} goes on generating it for nobody (RunnerRunning with no task). It holds the GPU; exobar holds this model's next request until the runner is ready again.`}
    >
      <span className="badge warn">cancelled</span>
      <span className="small">
        still generating a cancelled request, <LiveAge ageMs={ghost.ageMs} />
      </span>
    </div>
  );
}

function TaskRow({ task }: { task: ExoTaskSnapshot }) {
  const id = task.commandId ?? task.taskId;
  return (
    <li className="queue-row" data-testid="exo-task" data-place={task.place} data-observed={task.observed}>
      <span className="badge" title={`exo task status ${task.status}`}>
        {task.status}
      </span>
      <span className="muted small request-id" title={id}>
        {shortId(id)}
      </span>
      {!task.observed && (
        <span className="badge" title="Sent to exo directly, not through exobar: its prefill, tokens and TTFT are not seen">
          not observed
        </span>
      )}
      <span className="spacer" />
      <LiveAge ageMs={task.ageMs} />
    </li>
  );
}

function TaskList({ label, tasks, empty }: { label: string; tasks: ExoTaskSnapshot[]; empty: string }) {
  return (
    <div className="queue">
      <div className="row">
        <span className="label">{label}</span>
        <span className="spacer" />
        <span className="muted small tabular">{tasks.length}</span>
      </div>
      {tasks.length === 0 ? (
        <p className="muted small">{empty}</p>
      ) : (
        <ul className="queue-list" aria-label={label}>
          {tasks.map((t) => (
            <TaskRow key={t.taskId} task={t} />
          ))}
        </ul>
      )}
    </div>
  );
}

/**
 * One instance of the attached exo cluster: a row per node's runner, the queue split
 * into waiting for the model to load and in the runner (exo's state cannot tell a
 * queued request from a decoding one once in the runner), and cancellations exo has
 * not completed. Requests sent through exobar show as a local instance's do (phase,
 * prefill progress, TTFT in parts, tokens/s), a request held in exobar's own queue as
 * held by exobar. Stop deletes the model's instances on exo.
 */
export function ExoInstanceCard({ instance }: { instance: ExoInstanceSnapshot }) {
  const at = useExobar((s) => s.snapshot.at);
  const { exo } = instance;
  const waiting = exo.tasks.filter((t) => t.place === 'waiting_for_load');
  const inRunner = exo.tasks.filter((t) => t.place === 'in_runner');
  const serving = isServing(instance);
  const kindNote = exo.kindKnown ? exo.kind : `${exo.kind} (a kind this exobar does not know: shown as ring)`;
  // The queue holds exobar's proxied requests and exo's tasks it did not send; the latter are in exo's lists below.
  const direct = new Set(exo.tasks.filter((t) => !t.observed).map((t) => t.commandId ?? t.taskId));
  const proxied = instance.queue.requests.filter((r) => !direct.has(r.id));
  // Nothing has come through exobar yet: exo's own lists say it all, without empty exobar sections.
  const throughExobar = proxied.length > 0 || instance.ttft.samples.length > 0;
  return (
    <section className="card" aria-label={instance.modelName} data-testid="instance-card" data-source="exo" data-instance={instance.id}>
      <header className="card-header">
        <div className="card-title">
          <h2 title={instance.model}>{instance.modelName}</h2>
          <div className="badges">
            <InstanceTypeWord type={instance.instanceType} badge />
            <span className="badge info" title={`exo instance ${exo.exoInstanceId} · ${kindNote}${exo.sharding ? ` · ${exo.sharding} sharding` : ''}`}>
              exo
            </span>
            {exo.matchedByModel && (
              <span className="badge warn" title="exo restarted with new ids: this instance was matched to the earlier one by its model">
                matched by model
              </span>
            )}
          </div>
        </div>
        <StopButton instanceId={instance.id} modelName={instance.modelName} />
      </header>
      <ul className="exo-runners" aria-label="Runners">
        {exo.runners.map((r) => (
          <RunnerRow key={r.runnerId} runner={r} modelName={instance.modelName} at={at} />
        ))}
      </ul>
      {exo.ghostGeneration && <GhostGeneration ghost={exo.ghostGeneration} nodeNames={exo.runners} />}
      {exo.placedOnDemand && <ExoPlacedRow placed={exo.placedOnDemand} />}
      {instance.prefill && <PrefillProgress prefill={instance.prefill} />}
      {throughExobar && <QueueList label="Through exobar" requests={proxied} capacity={null} labelOf={proxiedLabel} />}
      {/* While every runner serves nothing waits for the load: the section shows only when it matters. */}
      {(waiting.length > 0 || !serving) && <TaskList label="Waiting for the model to load" tasks={waiting} empty="None waiting" />}
      <TaskList label="In the runner" tasks={inRunner} empty="No requests" />
      {exo.pendingCancels.length > 0 && (
        <div className="pending-cancels">
          <div className="row">
            <span className="label">Pending cancellations</span>
          </div>
          <ul aria-label="Pending cancellations">
            {exo.pendingCancels.map((c) => (
              <li key={c.taskId} className="row" data-testid="pending-cancel">
                <span className="badge warn">cancelled</span>
                <span className="muted small" title={c.commandId ?? c.taskId}>
                  {shortId(c.commandId ?? c.taskId)}
                </span>
                <span className="muted small">exo has not completed its CancelTask</span>
                <span className="spacer" />
                <LiveAge ageMs={c.ageMs} />
              </li>
            ))}
          </ul>
        </div>
      )}
      {throughExobar && <TtftPanel instanceId={instance.id} ttft={instance.ttft} />}
      <SharingLine sharing={instance.sharing} />
      <footer className="row small muted card-footer">
        <Throughput tokensPerSecond={instance.tokensPerSecond} />
        <span className="tabular" data-testid="exo-ended-tasks">
          {exo.endedTasks} ended since attached
        </span>
        <span className="spacer" />
        <span>TTFT and prefill: only for requests through exobar</span>
      </footer>
    </section>
  );
}
