import { useActions, useExobar } from '../../store/store-context';

/** "Stop" on an instance card: a local runner stops; an exo instance is deleted on exo. */
export function StopButton({ instanceId, modelName, shuttingDown = false }: { instanceId: string; modelName: string; shuttingDown?: boolean }) {
  const { stopInstance } = useActions();
  const stopping = useExobar((s) => s.busy[`stop:${instanceId}`] === true);
  return (
    <button
      type="button"
      className="button small"
      aria-label={`Stop ${modelName}`}
      disabled={stopping || shuttingDown}
      onClick={() => void stopInstance(instanceId)}
    >
      {stopping || shuttingDown ? 'Stopping…' : 'Stop'}
    </button>
  );
}
