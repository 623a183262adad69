// Secrets never leave the process in writing: URL credentials (`https://user:pass@host`) are redacted
// wherever a URL appears, and the run's secret values (the API key, URL passwords and the Basic tokens made of
// them) are replaced in every string that is written or printed. Applied where text is serialized (the
// event sinks, run.json, summary.json, the reports, the terminal), never at each source.

import { terminalSafe } from './text.js';

/** What a secret is replaced with. */
export const MASK = '***';

/** Secrets shorter than this are not replaced in free text (a 2-letter password would mask every "ok"); a
 * URL's credentials are still redacted wherever the URL appears. */
export const MIN_SECRET_CHARS = 4;

// scheme://userinfo@ — the userinfo runs to the last @ before the host (a raw @ in a password included),
// and never crosses a path, query, whitespace, quote or markup character.
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/?#"'<>`\\]*)@/gi;

/** `https://user:***@host` for `https://user:pass@host`; `https://***@host` for a user alone (often a token). */
export function redactUrlCredentials(text: string): string {
  if (!text.includes('://') || !text.includes('@')) return text;
  return text.replace(URL_USERINFO, (_, scheme: string, userinfo: string) => {
    const colon = userinfo.indexOf(':');
    return colon < 0 ? `${scheme}${MASK}@` : `${scheme}${userinfo.slice(0, colon)}:${MASK}@`;
  });
}

const HTML_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** The ways a value can appear once written: as is, JSON-escaped, percent-encoded, HTML- or XML-escaped. */
function formsOf(secret: string): string[] {
  const html = secret.replace(/[&<>"']/g, (c) => HTML_ENTITIES[c]!);
  const forms = [secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret), html, html.replace(/&#39;/g, '&apos;')];
  // JSON in a <script> tag escapes `<` as \u003c (report.html's data).
  forms.push(forms[1]!.replace(/</g, '\\u003c'));
  return [...new Set(forms)];
}

/** Replaces a run's secrets in text. Configure it once with the secret values; it never logs them. */
export class SecretScrubber {
  /** Every written form of every secret, longest first (a secret inside another is masked with it). */
  #forms: string[] = [];
  readonly #secrets = new Set<string>();

  constructor(secrets: Iterable<string> = []) {
    this.addAll(secrets);
  }

  /** How many secret values it replaces. */
  get size(): number {
    return this.#secrets.size;
  }

  /** Adds secret values (empty and too-short ones are skipped, see {@link MIN_SECRET_CHARS}). */
  addAll(secrets: Iterable<string>): this {
    let added = false;
    for (const secret of secrets) {
      if (secret.length < MIN_SECRET_CHARS || this.#secrets.has(secret)) continue;
      this.#secrets.add(secret);
      added = true;
    }
    if (added) this.#forms = [...new Set([...this.#secrets].flatMap(formsOf))].sort((a, b) => b.length - a.length);
    return this;
  }

  /** `text` with URL credentials redacted and every form of every secret replaced by `***`. Safe on a
   * serialized JSON line: what it puts in is `***`, which needs no escaping. */
  text(text: string): string {
    let out = redactUrlCredentials(text);
    for (const form of this.#forms) if (out.includes(form)) out = out.replaceAll(form, MASK);
    return out;
  }

  /** A deep copy of `value` with every string (keys too) passed through {@link text}. */
  value<T>(value: T): T {
    return this.#walk(value) as T;
  }

  #walk(value: unknown): unknown {
    if (typeof value === 'string') return this.text(value);
    if (Array.isArray(value)) return value.map((v) => this.#walk(v));
    if (value === null || typeof value !== 'object') return value;
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) {
      // defineProperty keeps a `__proto__` key an ordinary key.
      Object.defineProperty(out, this.text(key), { value: this.#walk(child), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
}

/**
 * The secret values hidden in URLs: a password (as written, percent-decoded, and the Basic token
 * `base64(user:password)` a client sends for it), or a user given alone (often a token).
 */
export function urlSecrets(url: string): string[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [];
  }
  const out: string[] = [];
  const decode = (s: string): string => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  };
  if (parsed.password !== '') {
    out.push(parsed.password, decode(parsed.password));
    out.push(Buffer.from(`${decode(parsed.username)}:${decode(parsed.password)}`).toString('base64'));
  } else if (parsed.username !== '') {
    out.push(parsed.username, decode(parsed.username));
  }
  return out;
}

// Everything this process prints, once guarded: URL credentials always, and the values registered so far; and
// no control a terminal would act on but roundload's own colours and line redraws (text.ts, terminalSafe).
const terminal = new SecretScrubber();
let terminalGuarded = false;

/**
 * Scrubs (and makes terminal-safe) everything this process writes to stdout and stderr from now on (the CLI calls it first thing), and
 * adds `secrets` to what is scrubbed (a command calls it again once it knows the run's secrets).
 */
export function guardTerminal(secrets: Iterable<string> = []): void {
  terminal.addAll(secrets);
  if (terminalGuarded) return;
  terminalGuarded = true;
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
    stream.write = (chunk: unknown, ...rest: unknown[]) => {
      if (typeof chunk === 'string') return write(terminalSafe(terminal.text(chunk)), ...rest);
      if (chunk instanceof Uint8Array) return write(Buffer.from(terminalSafe(terminal.text(Buffer.from(chunk).toString('utf8')))), ...rest);
      return write(chunk, ...rest);
    };
  }
}
