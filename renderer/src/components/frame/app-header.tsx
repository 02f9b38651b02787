import { useShallow } from 'zustand/react/shallow';
import { plural } from '../../../../shared/status-words';
import { pageConnection } from '../../lib/connection-view';
import { overallState } from '../../lib/overall-state';
import { useExobar } from '../../store/store-context';


/** The popover's top line: overall state, and once a snapshot said so, models running and warnings. */
export function AppHeader() {
  const state = useExobar(useShallow((s) => overallState(s.snapshot, s.connection, s.received, s.connectionProblem)));
  // Before any snapshot (no token, a refused one, nothing answering) the counts are unknown, not zero.
  const known = useExobar((s) => s.received);
  const connection = useExobar((s) => pageConnection(s.connection, s.connectionProblem, s.received));
  return (
    <header className={`app-header level-${state.level}`} data-testid="app-header" data-level={state.level} data-connection={connection}>
      <span className={`dot big level-${state.level}`} aria-hidden="true" />
      <h1>{state.headline}</h1>
      <span className="spacer" />
      {known && (
        <>
          <span className="muted small" data-testid="running-count">
            {/* exo's models are not counted while exo does not answer: "1 local model running · exo unreachable". */}
            {state.exoUnreachable ? plural(state.running, 'local model running', 'local models running') : plural(state.running, 'model running', 'models running')}
          </span>
          {state.exoUnreachable && (
            <span className="small warn-text" data-testid="exo-unreachable">
              exo unreachable
            </span>
          )}
          <span className={`small ${state.warnings > 0 ? 'warn-text' : 'muted'}`} data-testid="warning-count">
            {plural(state.warnings, 'warning', 'warnings')}
          </span>
        </>
      )}
    </header>
  );
}
