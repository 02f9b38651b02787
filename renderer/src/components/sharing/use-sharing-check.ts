/**
 * The state behind "Check GPU sharing": the kept reports (read while the panel is
 * open), the check running now (its progress polled every POLL_MS until it ends, then
 * the list again and, when done, its report shown), the report picked, the settings of
 * the next check, and start and cancel. Apart from the panel so the panel only draws.
 */
import { useCallback, useEffect, useState } from 'react';
import type { CheckList, CheckStatus, SharingCheckRequest } from '../../../../shared/sharing-check';
import { errorMessage } from '../../lib/error-message';
import { useActions } from '../../store/store-context';

/** How often a running check's progress is read. */
const POLL_MS = 500;

export function useSharingCheck(open: boolean) {
  const { startSharingCheck, getCheck, cancelCheck, listChecks } = useActions();
  const [list, setList] = useState<CheckList | null>(null);
  const [running, setRunning] = useState<CheckStatus | null>(null);
  const [shown, setShown] = useState<CheckStatus | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [ended, setEnded] = useState<string | null>(null);
  const [promptTokens, setPromptTokens] = useState(30_000);
  const [streams, setStreams] = useState(8);
  const [seconds, setSeconds] = useState(60);

  const show = useCallback(
    (id: string) =>
      getCheck(id).then(
        (status) => (setShown(status), setError(null)),
        (e: unknown) => setError(errorMessage(e)),
      ),
    [getCheck],
  );

  const refresh = useCallback(
    () =>
      listChecks().then(
        (got) => {
          setList(got);
          setRunning((now) => now ?? got.running);
          return got;
        },
        (e: unknown) => (setError(errorMessage(e)), null),
      ),
    [listChecks],
  );

  useEffect(() => {
    if (open) void refresh();
  }, [open, refresh]);

  // While a check runs: its progress every POLL_MS; when it ends, the list again and its report.
  const runningId = running?.id ?? null;
  useEffect(() => {
    if (!runningId) return;
    let live = true;
    const timer = setInterval(() => {
      getCheck(runningId).then(
        (status) => {
          if (!live) return;
          if (status.state === 'running') return setRunning(status);
          setRunning(null);
          setEnded(
            status.state === 'done'
              ? null
              : status.state === 'cancelled'
                ? 'The check was cancelled; the models are as they were.'
                : `The check failed: ${status.error ?? 'no reason given'}`,
          );
          if (status.state === 'done') setShown(status);
          void refresh();
        },
        (e: unknown) => live && setError(errorMessage(e)),
      );
    }, POLL_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [runningId, getCheck, refresh]);

  const start = () => {
    const request: SharingCheckRequest = { promptTokens, streams, seconds };
    setEnded(null);
    startSharingCheck(request).then(
      (status) => (setRunning(status), setError(null)),
      (e: unknown) => setError(errorMessage(e)),
    );
  };
  const cancel = () => {
    if (!running) return;
    setRunning({ ...running, step: 'Cancelling: putting the models back as they were' });
    cancelCheck(running.id).catch((e: unknown) => setError(errorMessage(e)));
  };

  return { list, running, shown, error, ended, promptTokens, setPromptTokens, streams, setStreams, seconds, setSeconds, show, start, cancel };
}
