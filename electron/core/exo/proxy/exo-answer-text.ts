/**
 * exo's answers read for exobar's own words: the message of an exo error, and a body
 * kept as JSON when it is JSON. The client still gets exo's bytes unchanged.
 */

/** The message of an exo error body: OpenAI's `error.message`, FastAPI's `detail`, or the text. */
export function exoMessage(body: Buffer): string {
  try {
    const json = JSON.parse(body.toString('utf8')) as { error?: { message?: unknown }; detail?: unknown };
    if (typeof json.error?.message === 'string') return json.error.message;
    if (json.detail !== undefined) return JSON.stringify(json.detail).slice(0, 300);
  } catch {
    // not JSON
  }
  return body.toString('utf8').slice(0, 300) || '(empty body)';
}

/** The body as JSON, or its first 300 characters when it is not JSON. */
export function parseOrText(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return body.toString('utf8').slice(0, 300);
  }
}
