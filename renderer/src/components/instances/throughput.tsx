import { formatRate } from '../../lib/format';

/** "Throughput 42.0 tok/s": an instance's generated tokens per second, local or exo alike. */
export function Throughput({ tokensPerSecond }: { tokensPerSecond: number | null }) {
  return (
    <span>
      Throughput{' '}
      <span className="tabular" data-testid="tokens-per-second">
        {formatRate(tokensPerSecond)}
      </span>
    </span>
  );
}
