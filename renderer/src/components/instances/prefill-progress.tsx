import type { PrefillSnapshot } from '../../../../shared/snapshot';
import { formatCount, formatDuration, formatPercent, shortId } from '../../lib/format';
import { ProgressBar } from '../common/progress-bar';

/**
 * The prompt being prefilled. A runner reports progress after each prefill chunk (exo:
 * 4096 tokens) and admits no other request until the prefill ends, so this bar is also
 * how long the queue behind it waits.
 */
export function PrefillProgress({ prefill }: { prefill: PrefillSnapshot }) {
  const { processedTokens, totalTokens, etaMs, requestId } = prefill;
  return (
    <div className="prefill" data-testid="prefill">
      <div className="row">
        <span className="label">Prefill</span>
        <span className="muted small">{shortId(requestId)}</span>
        <span className="spacer" />
        <span className="tabular">
          {formatCount(processedTokens)} / {formatCount(totalTokens)} tokens · {formatPercent(processedTokens, totalTokens)}
        </span>
      </div>
      <ProgressBar value={processedTokens} max={totalTokens} label="Prefill progress" />
      <div className="row muted small">
        <span>ETA {formatDuration(etaMs)}</span>
      </div>
    </div>
  );
}
