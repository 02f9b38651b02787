/** A sharing check's status as `GET /api/checks/{id}` answers it while the check runs, for fakes of the four check actions. */
import type { CheckStatus } from '../../../shared/sharing-check';

export function runningCheck(id = 'sharing-x', step = 'Starting', progress = 0): CheckStatus {
  return { id, kind: 'sharing', state: 'running', step, progress, startedAt: Date.now(), error: null, result: null, markdown: null };
}
