import type { MlxRuntimeSnapshot } from '../../../../shared/snapshot';
import { describeMlxSetupStep } from '../../lib/mlx-setup-steps';
import { useActions, useExobar } from '../../store/store-context';
import { ProgressBar } from '../common/progress-bar';

type Setup = NonNullable<MlxRuntimeSnapshot['setup']>;

/** pip's last lines, newest at the bottom (where pip puts its explanation of a failure). */
function OutputTail({ lines, label }: { lines: string[]; label: string }) {
  if (lines.length === 0) return null;
  return (
    <pre className="output-tail" aria-label={label} data-testid="mlx-output-tail">
      {lines.join('\n')}
    </pre>
  );
}

function SetupRunning({ setup }: { setup: Setup }) {
  const step = describeMlxSetupStep(setup.step);
  return (
    <div className="mlx-setup" data-testid="mlx-setup" data-state="running">
      <div className="row small">
        <span className="label">{step.label}…</span>
        <span className="spacer" />
        {step.number !== null && (
          <span className="muted tabular">
            step {step.number} of {step.total}
          </span>
        )}
      </div>
      <ProgressBar value={step.number === null ? 0 : step.number - 1} max={step.total} label="MLX runtime setup" />
      <p className="small muted ellipsis" data-testid="mlx-setup-message" title={setup.message}>
        {setup.message}
      </p>
      <OutputTail lines={setup.outputTail} label="pip output" />
    </div>
  );
}

function SetupFailed({ setup, onRetry, starting }: { setup: Setup; onRetry: () => void; starting: boolean }) {
  const step = describeMlxSetupStep(setup.step);
  return (
    <div className="mlx-setup" data-testid="mlx-setup" data-state="failed">
      <p className="failure" role="alert">
        Setup failed while {step.label.charAt(0).toLowerCase() + step.label.slice(1)}: {setup.error ?? setup.message}
      </p>
      <OutputTail lines={setup.outputTail} label="pip output" />
      <button type="button" className="button small" disabled={starting} onClick={onRetry}>
        {starting ? 'Starting…' : 'Retry setup'}
      </button>
    </div>
  );
}

/**
 * The MLX engine in one line, and what can be done about it. MLX needs Metal on Apple
 * silicon and a Python with mlx-lm (domain: exo's runners load models with MLX), so
 * where the Mac can run it but no such Python was found, one button sets up a private
 * venv with mlx-lm; its progress and pip's output come in the snapshot.
 */
/**
 * "chosen as Homebrew": why this Python, from the core's reason ("mlx-lm … found in …,
 * chosen as …"); null for a reason without it (an older core).
 */
function pythonChoice(reason: string): string | null {
  const at = reason.lastIndexOf(', chosen as ');
  return at < 0 ? null : reason.slice(at + 2);
}

export function MlxEngineStatus() {
  const { setupMlxRuntime, refreshMlxRuntime } = useActions();
  const mlx = useExobar((s) => s.snapshot.mlx ?? null);
  const starting = useExobar((s) => s.busy['mlx-setup'] === true);
  const refreshing = useExobar((s) => s.busy['mlx-refresh'] === true);
  const setup = mlx?.setup ?? null;
  const running = setup?.state === 'running';

  const checkAgain = (
    <button
      type="button"
      className="icon-button"
      disabled={refreshing || running}
      onClick={() => void refreshMlxRuntime()}
      title="Look for the MLX runtime and local models again"
    >
      {refreshing ? 'checking…' : 'check again'}
    </button>
  );

  if (!mlx) {
    return (
      <div className="mlx-engine" data-testid="mlx-engine" data-state="unknown">
        <div className="row small">
          <span className="label">MLX engine</span>
          <span className="muted">not checked yet</span>
        </div>
      </div>
    );
  }

  if (mlx.checking && !mlx.available && !running) {
    // The first look (or one after "check again") is still running: not an answer yet.
    return (
      <div className="mlx-engine" data-testid="mlx-engine" data-state="checking">
        <div className="row small">
          <span className="dot tone-busy" aria-hidden="true" />
          <span className="label">MLX engine</span>
          <span>looking for the MLX runtime…</span>
        </div>
      </div>
    );
  }

  if (mlx.available && !running) {
    return (
      <div className="mlx-engine" data-testid="mlx-engine" data-state="available">
        <div className="row small">
          <span className="dot tone-ok" aria-hidden="true" />
          <span className="label">MLX engine</span>
          <span>available</span>
          <span className="spacer" />
          {checkAgain}
        </div>
        <div className="row small muted">
          <span className="tabular">mlx-lm {mlx.version ?? 'unknown'}</span>
          <span>·</span>
          <span className="tabular" data-testid="mlx-local-models">
            {mlx.localModels === 1 ? '1 local model' : `${mlx.localModels} local models`}
          </span>
        </div>
        <div className="small muted ellipsis" data-testid="mlx-python" title={mlx.python ?? undefined}>
          {mlx.python}
        </div>
        {pythonChoice(mlx.reason) && (
          <div className="small muted" data-testid="mlx-choice" title={mlx.reason}>
            {pythonChoice(mlx.reason)}
          </div>
        )}
        {mlx.localModels === 0 && <p className="small muted">No MLX model found on disk: models in the Hugging Face cache or in ~/.exo/models appear here.</p>}
      </div>
    );
  }

  return (
    <div className="mlx-engine" data-testid="mlx-engine" data-state={running ? 'setting-up' : 'unavailable'}>
      <div className="row small">
        <span className={`dot ${running ? 'tone-busy' : 'tone-warn'}`} aria-hidden="true" />
        <span className="label">MLX engine</span>
        <span>{running ? 'setting up' : 'unavailable'}</span>
        <span className="spacer" />
        {!running && checkAgain}
      </div>
      {!running && (
        <p className="small muted" data-testid="mlx-reason">
          {mlx.reason}
        </p>
      )}
      {setup?.state === 'running' && <SetupRunning setup={setup} />}
      {setup?.state === 'failed' && mlx.supported && <SetupFailed setup={setup} starting={starting} onRetry={() => void setupMlxRuntime()} />}
      {!running && setup?.state !== 'failed' && mlx.supported && (
        <button type="button" className="button primary wide" disabled={starting} onClick={() => void setupMlxRuntime()}>
          {starting ? 'Starting…' : 'Set up MLX runtime'}
        </button>
      )}
    </div>
  );
}
