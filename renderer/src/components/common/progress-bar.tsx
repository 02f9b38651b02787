import { percentOf } from '../../lib/format';

/** A thin native-looking progress bar; `label` is read by screen readers. */
export function ProgressBar({ value, max, label }: { value: number; max: number; label: string }) {
  const percent = percentOf(value, max);
  return (
    <div className="progress" role="progressbar" aria-label={label} aria-valuemin={0} aria-valuemax={max} aria-valuenow={Math.min(value, max)}>
      <div className="progress-fill" style={{ width: `${percent}%` }} />
    </div>
  );
}
