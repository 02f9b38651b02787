import type { InstanceSharing } from '../../../../shared/sharing';
import { phaseVerb } from '../../../../shared/sharing';
import { formatCount, formatRate } from '../../lib/format';

/**
 * "over 3,993 tokens": what the figures were measured over. Each inter-token gap timed is
 * one token decoded in that condition; "(3993 gaps)" said the unit of the code, not the
 * operator's.
 */
function sampleWords(gaps: number): string {
  return `over ${formatCount(gaps)} ${gaps === 1 ? 'token' : 'tokens'}`;
}

/**
 * GPU sharing on the card, in plain words: "decodes at 64 % of its solo rate while
 * Llama 3.2 3B prefills", and each measured condition's rate and ITL p95 beside solo.
 * Nothing is shown before a decode was measured.
 */
export function SharingLine({ sharing }: { sharing: InstanceSharing }) {
  if (sharing.solo.gaps === 0 && sharing.neighbours.length === 0) return null;
  const minutes = Math.round(sharing.windowMs / 60_000);
  const itl = (v: number | null) => (v === null ? '–' : `${Math.round(v)} ms`);
  return (
    <div className="sharing small" data-testid="sharing">
      <div>
        GPU sharing:{' '}
        <span data-testid="sharing-summary">
          {sharing.summary ?? (sharing.neighbours.length === 0 ? 'decoded alone on its GPU so far' : 'measuring beside its neighbours…')}
        </span>
        <span className="muted">
          {' '}
          (last {minutes} min{sharing.observed === 'proxied' ? ', requests through exobar' : ''})
        </span>
      </div>
      <ul className="muted plain-list">
        <li className="tabular">
          {sharing.solo.gaps === 0
            ? 'alone: not measured yet'
            : `alone: ${formatRate(sharing.solo.decodeTokensPerSecond)}, ITL p95 ${itl(sharing.solo.itlP95Ms)} (${sampleWords(sharing.solo.gaps)})`}
        </li>
        {sharing.neighbours.map((n) => (
          <li key={`${n.instanceId}-${n.phase}-${n.node ?? ''}`} className="tabular">
            while {n.modelName} {phaseVerb(n.phase)}
            {n.node ? ` on ${n.node}` : ''}: {formatRate(n.decodeTokensPerSecond)}
            {n.decodeRatio !== null ? ` (${Math.round(n.decodeRatio * 100)} %)` : ''}, ITL p95 {itl(n.itlP95Ms)} ({sampleWords(n.gaps)})
          </li>
        ))}
      </ul>
    </div>
  );
}
