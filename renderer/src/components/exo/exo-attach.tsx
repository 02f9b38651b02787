import { useId, useState, type FormEvent } from 'react';
import type { ExoProbeAnswer } from '../../../../shared/api';
import { useActions, useExobar } from '../../store/store-context';
import { PanelToggle } from '../common/panel-toggle';
import { LOCAL_EXO_URL } from '../../../../shared/addresses';

/** exo's default address on this Mac. */

/** "exo found on this Mac — Attach": offered when exo answers locally and nothing is attached; never attached silently. */
export function ExoOfferBanner() {
  const offer = useExobar((s) => (s.snapshot.exo ? null : s.snapshot.exoOffer));
  const attaching = useExobar((s) => s.busy['exo-attach'] === true);
  const { attachExo } = useActions();
  if (!offer) return null;
  return (
    <section className="banner info" data-testid="exo-offer">
      <div className="row">
        <span>exo found on this Mac ({offer.url})</span>
        <span className="spacer" />
        <button type="button" className="button primary small" disabled={attaching} onClick={() => void attachExo(offer.url)}>
          {attaching ? 'Attaching…' : 'Attach'}
        </button>
      </div>
    </section>
  );
}

function probeWords(answer: ExoProbeAnswer): string {
  if (!answer.ok) return `Nothing exo-like answers at ${answer.url}: ${answer.error}`;
  const macs = answer.nodes === null ? '' : `, ${answer.nodes === 1 ? '1 Mac' : `${answer.nodes} Macs`}`;
  return `exo answers at ${answer.url} (node ${answer.nodeId.slice(0, 8)}${macs})`;
}

/** "Attach to exo": an address, tested first, then attached (saved as exo.url). Shown while nothing is attached. */
export function ExoAttachPanel() {
  const attached = useExobar((s) => s.snapshot.exo !== null);
  const attaching = useExobar((s) => s.busy['exo-attach'] === true);
  const { probeExo, attachExo } = useActions();
  const [open, setOpen] = useState(false);
  const [url, setUrl] = useState(LOCAL_EXO_URL);
  const [testing, setTesting] = useState(false);
  const [answer, setAnswer] = useState<ExoProbeAnswer | null>(null);
  const bodyId = useId();
  const inputId = useId();
  if (attached) return null;

  const test = async () => {
    setTesting(true);
    try {
      setAnswer(await probeExo(url.trim()));
    } finally {
      setTesting(false);
    }
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void attachExo(url.trim());
  };
  return (
    <section className="panel exo-attach" aria-label="Attach to exo">
      <PanelToggle open={open} onToggle={() => setOpen((o) => !o)} bodyId={bodyId}>
        <span>Attach to exo</span>
      </PanelToggle>
      <form id={bodyId} className="panel-body" hidden={!open} onSubmit={submit}>
        <label htmlFor={inputId} className="small muted">
          exo's API address (any Mac of the cluster)
        </label>
        <div className="row">
          <input
            id={inputId}
            type="url"
            className="ellipsis"
            value={url}
            onChange={(e) => {
              setUrl(e.target.value);
              setAnswer(null);
            }}
            required
          />
          <button type="button" className="button small" disabled={testing || !url.trim()} onClick={() => void test()}>
            {testing ? 'Testing…' : 'Test'}
          </button>
          <button type="submit" className="button primary small" disabled={attaching || !url.trim()}>
            {attaching ? 'Attaching…' : 'Attach'}
          </button>
        </div>
        {answer && (
          <p className={answer.ok ? 'small' : 'small failure'} role="status" data-testid="exo-probe-result">
            {probeWords(answer)}
          </p>
        )}
      </form>
    </section>
  );
}
