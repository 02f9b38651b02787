import { useEffect, useId, useState } from 'react';
import type { CatalogModel } from '../../../../shared/catalog';
import type { FitVerdict, ModelFit } from '../../../../shared/model-fit';
import type { LocalInstanceSnapshot, MlxRuntimeSnapshot } from '../../../../shared/snapshot';
import { isLocal } from '../../../../shared/instance-state';
import { ModelResidency } from './model-residency';
import { formatBytes } from '../../lib/format';
import { useActions, useExobar } from '../../store/store-context';
import { MlxEngineStatus } from './mlx-engine-status';
import { ExoModelDownloads } from './exo-model-downloads';
import { PanelToggle } from '../common/panel-toggle';

const ENGINE_LABEL: Record<string, string> = { sim: 'sim', mlx: 'MLX' };

/** The badge tone of each verdict. */
const VERDICT_TONE: Record<FitVerdict, string> = { fits: 'ok', tight: 'warn', does_not_fit: 'bad' };
const VERDICT_LABEL: Record<FitVerdict, string> = { fits: 'fits', tight: 'tight', does_not_fit: 'does not fit' };

/** "fits: needs 1.6 GiB; 18.0 GiB free, …": the fit check's verdict and figures for a model not running. */
function FitLine({ fit }: { fit: ModelFit }) {
  if (fit.running || !fit.verdict) return null;
  return (
    <div className="row small" data-testid="model-fit" data-verdict={fit.verdict}>
      <span className={`badge ${VERDICT_TONE[fit.verdict]}`}>{VERDICT_LABEL[fit.verdict]}</span>
      <span className="muted selectable">{fit.words.slice(fit.words.indexOf(':') + 1).trim()}</span>
    </div>
  );
}

/** The model's memory, one figure per model: the fit check's need (weights plus KV cache) when it made one, else the catalog's. */
function needOf(model: CatalogModel, fit: ModelFit | undefined): number {
  return fit?.fit?.models.find((m) => m.model === model.id)?.neededBytes ?? model.memoryBytes;
}

function ModelRow({ model, instance, fit }: { model: CatalogModel; instance: LocalInstanceSnapshot | undefined; fit: ModelFit | undefined }) {
  const running = instance !== undefined;
  return (
    <li className="model-row" data-testid="model-row" data-model={model.id}>
      <div className="row">
        <strong className="ellipsis" title={model.id}>
          {model.name}
        </strong>
        {model.simulated && <span className="badge sim">simulated</span>}
        {running && <span className="badge ok">running</span>}
        <span className="spacer" />
        <span className="badge" data-testid="model-engine">
          {ENGINE_LABEL[model.engine] ?? model.engine}
        </span>
        <span className="muted small tabular" data-testid="model-memory" title="Memory once loaded (weights plus KV cache where the fit check estimated it)">
          {formatBytes(needOf(model, fit))}
        </span>
      </div>
      <ModelResidency model={model.id} name={model.name} instance={instance} />
      {fit && !running && <FitLine fit={fit} />}
    </li>
  );
}

/** The MLX state in a few words, for the collapsed header. */
function mlxSummary(mlx: MlxRuntimeSnapshot | null): string {
  if (!mlx) return 'MLX not checked yet';
  if (mlx.setup?.state === 'running') return 'MLX setting up…';
  if (mlx.available) return 'MLX available';
  if (mlx.checking) return 'looking for MLX…';
  if (mlx.setup?.state === 'failed' && mlx.supported) return 'MLX setup failed';
  return mlx.supported ? 'MLX not set up' : 'MLX unavailable here';
}

/**
 * The model catalog (sim models, and the MLX models found on disk once the MLX runtime
 * is there) with engine and memory, each model's residency with Load, Pin and Unload
 * (model-residency.tsx), the MLX engine's state with its setup, and with exo attached
 * the downloads exo runs and the models it has downloaded (exo-model-downloads.tsx).
 * Collapsed by default: the popover's room belongs to the running models.
 */
export function ModelsPanel() {
  const { loadModels } = useActions();
  const [open, setOpen] = useState(false);
  const bodyId = useId();
  const models = useExobar((s) => s.models);
  const mlx = useExobar((s) => s.snapshot.mlx ?? null);
  const received = useExobar((s) => s.received);
  const runningKey = useExobar((s) => s.snapshot.instances.map((i) => i.model).join('\n'));
  const local = useExobar((s) => s.snapshot.instances).filter(isLocal);
  // The catalog changes when the runtime appears or the scan finds other models: reload then.
  const catalogKey = `${mlx?.available ?? false}:${mlx?.localModels ?? 0}`;

  // ...and when the running models change: what is free, and so each model's fit, changes with them.
  useEffect(() => {
    if (received) void loadModels();
  }, [received, catalogKey, runningKey, loadModels]);

  const count = models.models.length;
  const summary = `${count > 0 ? `${count === 1 ? '1 model' : `${count} models`} · ` : ''}${mlxSummary(mlx)}`;
  return (
    <section className="panel models-panel" aria-label="Models">
      <PanelToggle open={open} onToggle={() => setOpen((o) => !o)} bodyId={bodyId}>
        <span>Models</span>
        <span className="spacer" />
        <span className="muted small" data-testid="models-summary">
          {summary}
        </span>
      </PanelToggle>
      {/* hidden, not unmounted: aria-controls always names an element. */}
      <div id={bodyId} className="panel-body" hidden={!open}>
        <MlxEngineStatus />
        <ExoModelDownloads />
        {models.status === 'error' && (
          <p className="failure small" role="alert">
            Could not get the model list: {models.error}
          </p>
        )}
        {models.status === 'loading' && count === 0 && <p className="muted small">Loading models…</p>}
        {count > 0 && (
          <ul className="model-list" aria-label="Model catalog">
            {models.models.map((m) => (
              <ModelRow key={m.id} model={m} instance={local.find((i) => i.model === m.id)} fit={models.fits[m.id]} />
            ))}
          </ul>
        )}
      </div>
    </section>
  );
}
