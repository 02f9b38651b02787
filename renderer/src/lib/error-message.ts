/**
 * The words to show for a failed action. Electron wraps errors thrown in main as
 * "Error invoking remote method 'exobar:x': Error: <message>"; only <message> helps.
 */
export function errorMessage(error: unknown): string {
  const raw = error instanceof Error ? error.message : typeof error === 'string' ? error : 'Something went wrong';
  const stripped = raw.replace(/^Error invoking remote method '[^']*': (?:\w*Error: )?/, '');
  return stripped.trim() || 'Something went wrong';
}
