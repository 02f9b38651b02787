/**
 * Redaction for the diagnostic bundle: the one place that decides what private data
 * looks like and replaces it. Every file of the bundle, runner logs included, passes
 * through one {@link Redactor}, which counts what it removed per kind so the README
 * and the preview can say so.
 *
 * Two passes exist: {@link Redactor.text} for free text (logs, CSV cells) and
 * {@link Redactor.value} for structured data (JSON files), which additionally blanks
 * every field whose name says it holds prompt or completion text.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { homedir, hostname, userInfo } from 'node:os';

export const REDACTION_KINDS = [
  'prompt_text',
  'secret',
  'api_key',
  'bearer_token',
  'email',
  'home_dir',
  'user_name',
  'host_name',
  'ip_address',
  'mac_address',
] as const;
export type RedactionKind = (typeof REDACTION_KINDS)[number];
export type RedactionCounts = Record<RedactionKind, number>;

/** What the replacement says, per kind: short, bracketed, and valid inside a JSON string. */
const MARK: Record<RedactionKind, string> = {
  prompt_text: '[redacted:text]',
  secret: '[redacted:secret]',
  api_key: '[redacted:api-key]',
  bearer_token: '[redacted:token]',
  email: '[redacted:email]',
  home_dir: '~',
  user_name: '[redacted:user]',
  host_name: '[redacted:host]',
  ip_address: '[redacted:ip]',
  mac_address: '[redacted:mac]',
};

/** The machine's identity, which must not leave it. Injectable so tests can plant their own. */
export interface Identity {
  userName: string | null;
  hostName: string | null;
  homeDir: string | null;
}

export interface RedactorOptions {
  identity?: Partial<Identity>;
  /** Literal secrets known to the caller (the control token, secret settings values). */
  secrets?: readonly string[];
}

/**
 * Field names whose values are prompt or completion text (OpenAI's and the runner
 * protocol's names). The node keeps token counts only, but a field with such a name
 * is blanked wherever it appears, so text cannot slip in through a future field.
 */
const TEXT_FIELDS = new Set([
  'prompt',
  'prompts',
  'messages',
  'content',
  'text',
  'completion',
  'completions',
  'delta',
  'choices',
  // exo's TextGeneration taskParams (either casing): the request's input, system
  // instructions, the chat template's messages, images and tool definitions.
  'input',
  'instructions',
  'chat_template_messages',
  'chattemplatemessages',
  'images',
  'image_hashes',
  'imagehashes',
  'tools',
]);

/**
 * Account names that identify nobody (service and CI accounts). Redacting them as words
 * would mangle the bundle's own vocabulary ("runner_status") without protecting anyone;
 * their home directory is still shown as `~`.
 */
const GENERIC_ACCOUNTS = new Set(['root', 'runner', 'user', 'admin', 'ubuntu', 'node', 'ci', 'build', 'docker', 'nobody', 'daemon', 'app']);
const GENERIC_HOSTS = new Set(['localhost', 'localhost.localdomain']);

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The current machine's user name, host name and home directory; each null when unknown. */
export function currentIdentity(): Identity {
  let userName: string | null = null;
  try {
    userName = userInfo().username;
  } catch {
    // No passwd entry (some containers): fall back to the environment.
    userName = process.env.USER ?? process.env.LOGNAME ?? null;
  }
  let hostName: string | null = null;
  try {
    hostName = hostname();
  } catch {
    hostName = null;
  }
  let home: string | null = null;
  try {
    home = homedir();
  } catch {
    home = null;
  }
  return { userName: userName || null, hostName: hostName || null, homeDir: home || null };
}

function emptyCounts(): RedactionCounts {
  return Object.fromEntries(REDACTION_KINDS.map((k) => [k, 0])) as RedactionCounts;
}

interface Rule {
  kind: RedactionKind;
  pattern: RegExp;
  /** Replacement for one match; returning the match unchanged means "not private". */
  replace: (match: string, ...groups: string[]) => string;
  /** A substring every match contains: text without it skips the (slower) regex scan. */
  hint?: string;
}

/**
 * Replaces private data in text and structured values, counting per kind.
 * One instance per bundle: its counts are the bundle's redaction report.
 */
export class Redactor {
  private readonly counts = emptyCounts();
  private readonly rules: Rule[];

  constructor(options: RedactorOptions = {}) {
    const identity = { ...currentIdentity(), ...options.identity };
    this.rules = buildRules(identity, options.secrets ?? []);
  }

  /** Counts per kind so far (a copy). */
  report(): RedactionCounts {
    return { ...this.counts };
  }

  /** Total replacements so far. */
  total(): number {
    return Object.values(this.counts).reduce((a, b) => a + b, 0);
  }

  /** Redacts free text (a log, a CSV cell, a message). */
  text(input: string): string {
    let out = input;
    for (const rule of this.rules) {
      if (rule.hint !== undefined && !out.includes(rule.hint)) continue;
      rule.pattern.lastIndex = 0;
      if (!rule.pattern.test(out)) continue;
      rule.pattern.lastIndex = 0;
      out = out.replace(rule.pattern, (match: string, ...rest: unknown[]) => {
        // rest is (...captures, offset, whole input[, named groups]): keep the captures only.
        const offsetAt = rest.findIndex((g) => typeof g === 'number');
        const groups = rest.slice(0, offsetAt).map((g) => (typeof g === 'string' ? g : ''));
        const replaced = rule.replace(match, ...groups);
        if (replaced !== match) this.counts[rule.kind] += 1;
        return replaced;
      });
    }
    return out;
  }

  /**
   * Redacts a JSON-like value: strings pass through {@link text}, and fields named like
   * prompt or completion text lose their value (numbers, booleans and null are kept:
   * they are counts and flags, never text).
   */
  value<T>(input: T): T {
    return this.walk(input, null) as T;
  }

  /** Short strings repeat (ids, kinds, statuses): their redaction is remembered, with its counts. */
  private readonly memo = new Map<string, { out: string; counts: Partial<RedactionCounts> }>();

  private memoText(input: string): string {
    if (input.length > 256) return this.text(input);
    const hit = this.memo.get(input);
    if (hit) {
      for (const [kind, n] of Object.entries(hit.counts) as Array<[RedactionKind, number]>) this.counts[kind] += n;
      return hit.out;
    }
    const before = { ...this.counts };
    const out = this.text(input);
    const counts: Partial<RedactionCounts> = {};
    for (const kind of REDACTION_KINDS) if (this.counts[kind] !== before[kind]) counts[kind] = this.counts[kind] - before[kind];
    if (this.memo.size < 100_000) this.memo.set(input, { out, counts });
    return out;
  }

  private walk(input: unknown, key: string | null): unknown {
    if (key !== null && TEXT_FIELDS.has(key.toLowerCase()) && input !== null && typeof input === 'object') {
      this.counts.prompt_text += 1;
      return MARK.prompt_text;
    }
    if (typeof input === 'string') {
      if (key !== null && input !== '' && TEXT_FIELDS.has(key.toLowerCase())) {
        this.counts.prompt_text += 1;
        return MARK.prompt_text;
      }
      return this.memoText(input);
    }
    if (Array.isArray(input)) return input.map((item) => this.walk(item, null));
    if (input !== null && typeof input === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(input as Record<string, unknown>)) out[k] = this.walk(v, k);
      return out;
    }
    return input;
  }
}

function buildRules(identity: Identity, secrets: readonly string[]): Rule[] {
  const rules: Rule[] = [];
  const mark = (kind: RedactionKind) => () => MARK[kind];

  // Known secrets first and verbatim (longest first, so one never leaves a piece of another).
  const literal = [...new Set(secrets.filter((s) => s.length >= 4))].sort((a, b) => b.length - a.length);
  if (literal.length > 0) {
    rules.push({ kind: 'secret', pattern: new RegExp(literal.map(escapeRegExp).join('|'), 'g'), replace: mark('secret') });
  }

  // Text fields in logged JSON or Python reprs ("content": "...", 'text': '...'), e.g. the
  // runner's own protocol lines in stdout.log (TokenChunk.text is completion text) or a
  // malformed line echoed to stderr. An unterminated value (a line cut at 200 chars) runs
  // to the end of the line.
  rules.push({
    kind: 'prompt_text',
    pattern: /(["'])(prompt|content|text|completion|delta)\1(\s*:\s*)(?:"(?:[^"\\\n]|\\.)*(?:"|$)|'(?:[^'\\\n]|\\.)*(?:'|$))/gim,
    replace: (match, quote = '"', key = '', sep = '') => {
      const value = match.slice(quote.length * 2 + key.length + sep.length);
      if (value === '""' || value === "''") return match;
      return `${quote}${key}${quote}${sep}"${MARK.prompt_text}"`;
    },
  });
  // Python reprs in exo's logs (pydantic models print `content='...'`, `input=[...]`):
  // the rest of the line is text.
  rules.push({
    kind: 'prompt_text',
    pattern: /\b(content|input|instructions|chat_template_messages|images)(=)(?!\s|None\b|\[\]|\[redacted)[^\n]*/g,
    replace: (_match, key = '', sep = '') => `${key}${sep}${MARK.prompt_text}`,
  });
  // "prompt: ..." / "prompt=..." in plain log lines: the rest of the line is text.
  rules.push({
    kind: 'prompt_text',
    pattern: /\b(prompt|completion)(\s*[:=]\s*)(?![\s\d"'[{])[^\n]*/gi,
    replace: (_match, key = '', sep = '') => `${key}${sep}${MARK.prompt_text}`,
  });

  rules.push({
    kind: 'bearer_token',
    pattern: /\b(Bearer)(\s+)([A-Za-z0-9._~+/=-]{6,})/gi,
    replace: (match, word = '', space = '', token = '') => (token.startsWith('[') ? match : `${word}${space}${MARK.bearer_token}`),
  });
  // OpenAI-style keys (sk-..., sk-proj-..., sk-ant-...).
  rules.push({ kind: 'api_key', pattern: /\bsk-[A-Za-z0-9_-]{8,}/g, replace: mark('api_key'), hint: 'sk-' });
  // key=value / "key": "value" for secret-looking names; the value must hold a letter,
  // so counts such as "maxTokens": 123456 are left alone.
  rules.push({
    kind: 'secret',
    pattern:
      /\b((?:x-)?(?:api[_-]?key|access[_-]?token|auth[_-]?token|control[_-]?token|token|secret|password|passwd|authorization)["']?\s*[:=]\s*["']?)(?!\[redacted|Bearer\b|Basic\b)(?=[^\s"',;]*[A-Za-z])([^\s"',;]{6,})/gi,
    replace: (_match, prefix = '') => `${prefix}${MARK.secret}`,
  });
  rules.push({ kind: 'email', pattern: /\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b/g, replace: mark('email'), hint: '@' });

  // The home directory becomes ~ before the user name is looked for (it usually holds it).
  const home = identity.homeDir && identity.homeDir !== '/' ? identity.homeDir.replace(/[/\\]+$/, '') : null;
  if (home) {
    rules.push({ kind: 'home_dir', pattern: new RegExp(`${escapeRegExp(home)}(?![A-Za-z0-9_.-])`, 'g'), replace: mark('home_dir') });
  }
  // Other users' homes (macOS and Linux layouts): keep the layout, drop the name.
  rules.push({
    kind: 'user_name',
    pattern: /(\/(?:Users|home)\/)(?!Shared\b|\[redacted)([^/\s"'`:]+)/g,
    replace: (_match, prefix = '') => `${prefix}${MARK.user_name}`,
  });

  const user = identity.userName;
  if (user && user.length >= 2 && !GENERIC_ACCOUNTS.has(user.toLowerCase())) {
    rules.push({ kind: 'user_name', pattern: wordPattern(user), replace: mark('user_name') });
  }
  const host = identity.hostName;
  if (host && !GENERIC_HOSTS.has(host.toLowerCase())) {
    const names = new Set([host]);
    const short = host.split('.')[0];
    if (short && short.length >= 3) names.add(short);
    const alternatives = [...names]
      .sort((a, b) => b.length - a.length)
      .map(escapeRegExp)
      .join('|');
    rules.push({ kind: 'host_name', pattern: new RegExp(`(?<![A-Za-z0-9_-])(?:${alternatives})(?![A-Za-z0-9_-])`, 'gi'), replace: mark('host_name') });
  }

  rules.push({ kind: 'mac_address', pattern: /\b(?:[0-9a-f]{2}[:-]){5}[0-9a-f]{2}\b/gi, replace: mark('mac_address') });
  // IPv6 candidates are checked with the real parser: "12:34:56" (a time) is not one.
  rules.push({
    kind: 'ip_address',
    // Only the two shapes an IPv6 address can have (8 groups, or "::" compression), which
    // keeps the scan of megabytes of logs fast.
    pattern:
      /(?<![0-9A-Za-z:.])(?:(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}|(?:[0-9a-f]{1,4}(?::[0-9a-f]{1,4}){0,6})?::(?:[0-9a-f]{1,4}(?::[0-9a-f]{1,4}){0,6})?)(?:%[A-Za-z0-9]+)?(?![0-9A-Za-z:])/gi,
    replace: (match) => {
      const address = match.split('%')[0] ?? match;
      if (!isIPv6(address)) return match;
      if (address === '::1' || address === '::' || /^(?:0{1,4}:){7}0{0,3}1$/.test(address)) return match;
      return MARK.ip_address;
    },
  });
  rules.push({
    kind: 'ip_address',
    pattern: /(?<![0-9.])(?:\d{1,3}\.){3}\d{1,3}(?![0-9]|\.\d)/g,
    replace: (match) => (!isIPv4(match) || match.startsWith('127.') || match === '0.0.0.0' ? match : MARK.ip_address),
  });
  return rules;
}

/** A literal that must stand alone: not part of a longer word, identifier or path segment name. */
function wordPattern(word: string): RegExp {
  return new RegExp(`(?<![A-Za-z0-9_])${escapeRegExp(word)}(?![A-Za-z0-9_])`, 'gi');
}

/** Human words for each kind, for the README. */
export const REDACTION_DESCRIPTIONS: Record<RedactionKind, string> = {
  prompt_text: 'prompt and completion text (only token counts are kept)',
  secret: 'secrets: the control token and secret-looking settings or log values',
  api_key: 'API keys (sk-...)',
  bearer_token: 'bearer tokens in Authorization headers',
  email: 'e-mail addresses',
  home_dir: 'the home directory (shown as ~)',
  user_name: 'the user name (and other users\u2019 names in /Users or /home paths)',
  host_name: 'the host name',
  ip_address: 'IP addresses other than loopback',
  mac_address: 'MAC addresses',
};

/** The marker text of a kind, e.g. for docs and tests. */
export function redactionMark(kind: RedactionKind): string {
  return MARK[kind];
}
