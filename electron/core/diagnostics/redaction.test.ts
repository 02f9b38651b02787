import { describe, expect, it } from 'vitest';
import { homedir } from 'node:os';
import { currentIdentity, Redactor } from './redaction';

const identity = { userName: 'zelda', hostName: 'zeldas-macbook-pro.local', homeDir: '/Users/zelda' };

function redactor(secrets: string[] = []): Redactor {
  return new Redactor({ identity, secrets });
}

describe('Redactor.text', () => {
  it('shows the home directory as ~ and drops the user name elsewhere', () => {
    const r = redactor();
    const out = r.text('loading /Users/zelda/models/llama (owner zelda, ZELDA)');
    expect(out).toBe('loading ~/models/llama (owner [redacted:user], [redacted:user])');
    expect(r.report().home_dir).toBe(1);
    expect(r.report().user_name).toBe(2);
  });

  it('keeps words that merely contain the user name', () => {
    expect(redactor().text('zeldafan and zelda_x')).toBe('zeldafan and zelda_x');
  });

  it('drops other users\u2019 names from /Users and /home paths', () => {
    expect(redactor().text('/Users/bob/x and /home/carol/y and /Users/Shared/z')).toBe(
      '/Users/[redacted:user]/x and /home/[redacted:user]/y and /Users/Shared/z',
    );
  });

  it('redacts the host name, full and short', () => {
    const r = redactor();
    expect(r.text('host zeldas-macbook-pro.local aka Zeldas-MacBook-Pro')).toBe('host [redacted:host] aka [redacted:host]');
    expect(r.report().host_name).toBe(2);
  });

  it('redacts API keys, bearer tokens and known secrets', () => {
    const r = redactor(['tok_abcdefghijklmnopqrstuvwxyz0123']);
    const out = r.text(
      'key sk-proj-AbCdEf0123456789xyz; Authorization: Bearer abc.DEF-123_456; control tok_abcdefghijklmnopqrstuvwxyz0123; api_key=hunter2hunter2',
    );
    expect(out).not.toMatch(/AbCdEf0123456789xyz|abc\.DEF-123_456|tok_abcdef|hunter2/);
    expect(out).toContain('Bearer [redacted:token]');
    expect(r.report()).toMatchObject({ api_key: 1, bearer_token: 1, secret: 2 });
  });

  it('leaves counts that sit under secret-sounding names alone', () => {
    expect(redactor().text('"maxTokens": 123456, token: 42')).toBe('"maxTokens": 123456, token: 42');
  });

  it('redacts IP addresses except loopback and the unspecified address', () => {
    const r = redactor();
    const out = r.text('peer 192.168.1.20 and 10.0.0.7, local 127.0.0.1 and 0.0.0.0, v6 fe80::1%en0 2001:db8::42 ::1');
    expect(out).toBe('peer [redacted:ip] and [redacted:ip], local 127.0.0.1 and 0.0.0.0, v6 [redacted:ip] [redacted:ip] ::1');
    expect(r.report().ip_address).toBe(4);
  });

  it('does not mistake times, versions with fewer parts, or durations for addresses', () => {
    const text = 'at 12:34:56.789 node v20.19.0 took 1.5 s, ratio 3:1';
    expect(redactor().text(text)).toBe(text);
  });

  it('redacts MAC and e-mail addresses', () => {
    expect(redactor().text('en0 a4:83:e7:12:34:56 mail zelda@example.com')).toBe('en0 [redacted:mac] mail [redacted:email]');
  });

  it('removes text fields from logged protocol lines, also when the line was cut', () => {
    const r = redactor();
    const chunk = '{"type":"ChunkGenerated","commandId":"c1","chunk":{"kind":"TokenChunk","text":"the secret answer","tokenId":7}}';
    const cut = `[exobar] malformed runner line (not JSON): {"kind":"TextGeneration","params":{"messages":[{"role":"user","content":"my secret prompt is`;
    const out = r.text(`${chunk}\n${cut}\n`);
    expect(out).not.toContain('secret answer');
    expect(out).not.toContain('secret prompt');
    expect(JSON.parse(out.split('\n')[0]!)).toMatchObject({ chunk: { text: '[redacted:text]', tokenId: 7 } });
    expect(r.report().prompt_text).toBe(2);
  });

  it('removes Python-style text fields and "prompt:" log lines', () => {
    const out = redactor().text("{'content': 'hush hush'}\nprompt: tell me everything\nprompt_tokens: 12");
    expect(out).toBe('{\'content\': "[redacted:text]"}\nprompt: [redacted:text]\nprompt_tokens: 12');
  });

  it('does not redact generic account names as words', () => {
    const r = new Redactor({ identity: { userName: 'runner', hostName: null, homeDir: '/home/runner' } });
    expect(r.text('runner_status at /home/runner/x by runner')).toBe('runner_status at ~/x by runner');
  });
});

describe('Redactor defaults', () => {
  it('uses this machine\u2019s identity when none is given', () => {
    const home = homedir();
    expect(currentIdentity().homeDir).toBe(home);
    if (home === '/' || home === '') return;
    expect(new Redactor().text(`log at ${home}/.exobar/logs`)).toBe('log at ~/.exobar/logs');
  });
});

describe('Redactor.value', () => {
  it('blanks text fields, keeps counts, and redacts strings everywhere', () => {
    const r = redactor(['the-control-token-123']);
    const out = r.value({
      promptTokens: 12,
      messages: [{ role: 'user', content: 'hello' }],
      nested: { text: 'completion words', prompt: 40, path: '/Users/zelda/x', note: 'Bearer the-control-token-123' },
      list: ['sk-abcdefghijklmnop'],
    });
    expect(out).toEqual({
      promptTokens: 12,
      messages: '[redacted:text]',
      nested: { text: '[redacted:text]', prompt: 40, path: '~/x', note: 'Bearer [redacted:secret]' },
      list: ['[redacted:api-key]'],
    });
    expect(r.report()).toMatchObject({ prompt_text: 2, home_dir: 1, secret: 1, api_key: 1 });
  });

  it('is idempotent: redacted output redacts to itself', () => {
    const r = redactor(['the-control-token-123']);
    const once = r.text('Bearer the-control-token-123 sk-abcdefghijklmnop /Users/zelda "text":"x" 10.1.2.3');
    const before = r.total();
    expect(r.text(once)).toBe(once);
    expect(r.total()).toBe(before);
  });
});
