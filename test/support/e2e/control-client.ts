/** The control API, as the test drives it from outside the page (bearer token). */
import type { Snapshot } from '../../../shared/snapshot';

export function controlClient(url: string, token: string) {
  const call = async (method: string, path: string, body?: unknown): Promise<unknown> => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
  return {
    state: () => call('GET', '/api/state') as Promise<Snapshot>,
    patchInstance: (id: string, body: unknown) => call('PATCH', `/api/instances/${encodeURIComponent(id)}`, body),
  };
}
