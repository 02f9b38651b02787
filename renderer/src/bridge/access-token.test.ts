import { describe, expect, it, vi } from 'vitest';
import { takeAccessToken, TOKEN_STORAGE_KEY, type TokenEnvironment } from './access-token';

function env(hash: string, stored: string | null = null) {
  const storage = new Map<string, string>(stored ? [[TOKEN_STORAGE_KEY, stored]] : []);
  const replaceState = vi.fn();
  const e: TokenEnvironment = {
    location: { hash, pathname: '/', search: '' },
    history: { replaceState, state: null },
    storage: { getItem: (k) => storage.get(k) ?? null, setItem: (k, v) => void storage.set(k, v) },
  };
  return { e, storage, replaceState };
}

describe('takeAccessToken', () => {
  it('takes the token from the fragment, keeps it in sessionStorage and scrubs it from the address', () => {
    const { e, storage, replaceState } = env('#token=s3cret-token');
    expect(takeAccessToken(e)).toBe('s3cret-token');
    expect(storage.get(TOKEN_STORAGE_KEY)).toBe('s3cret-token');
    expect(replaceState).toHaveBeenCalledWith(null, '', '/');
    expect(JSON.stringify(replaceState.mock.calls)).not.toContain('s3cret');
  });

  it('keeps other fragment parameters', () => {
    const { e, replaceState } = env('#view=compact&token=abc');
    expect(takeAccessToken(e)).toBe('abc');
    expect(replaceState).toHaveBeenCalledWith(null, '', '/#view=compact');
  });

  it('reads the stored token after a reload, without touching the address', () => {
    const { e, replaceState } = env('', 'from-before');
    expect(takeAccessToken(e)).toBe('from-before');
    expect(replaceState).not.toHaveBeenCalled();
  });

  it('answers null when there is no token anywhere', () => {
    expect(takeAccessToken(env('').e)).toBeNull();
  });

  it('works against the real jsdom window: the token leaves the URL', () => {
    window.history.replaceState(null, '', '/#token=xyz');
    window.sessionStorage.clear();
    expect(takeAccessToken()).toBe('xyz');
    expect(window.location.href).not.toContain('xyz');
    expect(window.sessionStorage.getItem(TOKEN_STORAGE_KEY)).toBe('xyz');
  });
});
