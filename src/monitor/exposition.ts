// Prometheus text exposition (format 0.0.4, plus the OpenMetrics bits SGLang's client may emit) → samples.
// A push parser: feed() text in any pieces, end() returns what was read. Each complete line goes through a
// character state machine; a bad line is skipped and reported with its number, never fatal to the scrape.

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped' | 'info' | 'stateset' | 'gaugehistogram' | 'unknown';

const METRIC_TYPES: ReadonlySet<string> = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped', 'info', 'stateset', 'gaugehistogram', 'unknown']);

/** Suffixes a sample name may add to its family name (histograms, summaries, counters, OpenMetrics). */
const FAMILY_SUFFIXES = ['_bucket', '_count', '_sum', '_total', '_created', '_gcount', '_gsum', '_info'] as const;

export interface ExpositionFamily {
  name: string;
  type: MetricType;
  help: string | null;
}

export interface ExpositionSample {
  /** Sample name as written (`sglang:e2e_request_latency_seconds_bucket`). */
  name: string;
  /** Every label, unescaped, in the order written. */
  labels: Record<string, string>;
  value: number;
  /** The optional timestamp, in ms since the epoch. */
  timestampMs: number | null;
  /** The family it belongs to by HELP/TYPE (the name itself when none was declared). */
  family: string;
  type: MetricType;
}

export interface ExpositionIssue {
  /** 1-based line number. */
  line: number;
  message: string;
}

export interface Exposition {
  samples: ExpositionSample[];
  families: Map<string, ExpositionFamily>;
  /** Lines that could not be read (each skipped). */
  issues: ExpositionIssue[];
  lines: number;
}

export interface ParserOptions {
  /** Keep only samples whose name passes (the rest of such a line is not parsed). @default keep all */
  keep?: (name: string) => boolean;
  /** Stop recording issues after this many (they are still counted in `issueCount`). @default 20 */
  maxIssues?: number;
}

class LineError extends Error {}

const isNameStart = (c: string): boolean => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_' || c === ':';
const isNameChar = (c: string): boolean => isNameStart(c) || (c >= '0' && c <= '9');
const isLabelStart = (c: string): boolean => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_';
const isLabelChar = (c: string): boolean => isLabelStart(c) || (c >= '0' && c <= '9');
const isBlank = (c: string | undefined): boolean => c === ' ' || c === '\t';

const FLOAT = /^[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)$/i;

/** A float as the exposition writes it: decimals, exponents, `NaN`, `+Inf`, `-Inf` (case-insensitive, as Go reads them). */
export function parseFloatToken(token: string): number | null {
  if (!FLOAT.test(token)) return null;
  const lower = token.toLowerCase();
  if (lower.endsWith('nan')) return Number.NaN;
  if (lower.includes('inf')) return lower.startsWith('-') ? -Infinity : Infinity;
  return Number(token);
}

export class ExpositionParser {
  readonly #keep: ((name: string) => boolean) | null;
  readonly #maxIssues: number;
  #pending = '';
  #line = 0;
  #issueCount = 0;
  readonly #out: Exposition = { samples: [], families: new Map(), issues: [], lines: 0 };

  constructor(options: ParserOptions = {}) {
    this.#keep = options.keep ?? null;
    this.#maxIssues = options.maxIssues ?? 20;
  }

  /** Lines that failed, including those past `maxIssues`. */
  get issueCount(): number {
    return this.#issueCount;
  }

  feed(text: string): void {
    let from = 0;
    for (;;) {
      const nl = text.indexOf('\n', from);
      if (nl < 0) break;
      const piece = text.slice(from, nl);
      const line = this.#pending === '' ? piece : this.#pending + piece;
      this.#pending = '';
      this.#handle(line);
      from = nl + 1;
    }
    if (from < text.length) this.#pending += text.slice(from);
  }

  /** Reads a last line without a newline, and returns everything read. */
  end(): Exposition {
    if (this.#pending !== '') {
      const line = this.#pending;
      this.#pending = '';
      this.#handle(line);
    }
    this.#out.lines = this.#line;
    return this.#out;
  }

  #handle(raw: string): void {
    this.#line += 1;
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    try {
      this.#parseLine(line);
    } catch (error) {
      if (!(error instanceof LineError)) throw error;
      this.#issueCount += 1;
      if (this.#out.issues.length < this.#maxIssues) this.#out.issues.push({ line: this.#line, message: error.message });
    }
  }

  #parseLine(line: string): void {
    let i = 0;
    while (isBlank(line[i])) i += 1;
    if (i === line.length) return; // blank line
    if (line[i] === '#') {
      this.#comment(line, i + 1);
      return;
    }
    this.#sample(line, i);
  }

  /** `# HELP name text`, `# TYPE name type`, or any other comment (ignored). */
  #comment(line: string, start: number): void {
    let i = start;
    while (isBlank(line[i])) i += 1;
    const keywordEnd = scanWhile(line, i, (c) => !isBlank(c));
    const keyword = line.slice(i, keywordEnd);
    if ((keyword !== 'HELP' && keyword !== 'TYPE') || !isBlank(line[keywordEnd])) return;
    i = keywordEnd;
    while (isBlank(line[i])) i += 1;
    const [name, afterName] = readMetricName(line, i);
    if (name === null) return; // `# HELP` with no name: only a comment
    i = afterName;
    if (i < line.length && !isBlank(line[i])) throw new LineError(`${keyword} ${name}: expected a blank after the metric name`);
    while (isBlank(line[i])) i += 1;
    const family = this.#family(name);
    if (keyword === 'HELP') {
      family.help = unescapeHelp(line.slice(i));
      return;
    }
    const type = line.slice(i).trimEnd();
    if (!METRIC_TYPES.has(type)) throw new LineError(`TYPE ${name}: unknown type "${type}"`);
    family.type = type as MetricType;
  }

  #family(name: string): ExpositionFamily {
    let family = this.#out.families.get(name);
    if (family === undefined) {
      family = { name, type: 'untyped', help: null };
      this.#out.families.set(name, family);
    }
    return family;
  }

  /** The declared family a sample name belongs to: itself, or itself minus a family suffix (`x_created` → `x_total`). */
  #familyOf(name: string): ExpositionFamily | undefined {
    const families = this.#out.families;
    const direct = families.get(name);
    if (direct !== undefined) return direct;
    for (const suffix of FAMILY_SUFFIXES) {
      if (!name.endsWith(suffix)) continue;
      const base = name.slice(0, -suffix.length);
      const found = families.get(base) ?? families.get(`${base}_total`);
      if (found !== undefined) return found;
    }
    return undefined;
  }

  /** `name{label="value",…} value [timestamp]`; the name may also be quoted inside the braces (UTF-8 names). */
  #sample(line: string, start: number): void {
    let [name, i] = readMetricName(line, start);
    let labels: Record<string, string> = {};
    if (name === null && line[i] !== '{') throw new LineError(`expected a metric name, got "${line.slice(start, start + 20)}"`);
    if (name !== null && this.#keep !== null && !this.#keep(name)) return;
    const afterBlanks = scanWhile(line, i, isBlank);
    if (line[afterBlanks] === '{') {
      const read = readLabels(line, afterBlanks + 1);
      labels = read.labels;
      i = read.next;
      if (read.quotedName !== null) {
        if (name !== null) throw new LineError(`${name}: a metric name both before and inside the braces`);
        name = read.quotedName;
        if (this.#keep !== null && !this.#keep(name)) return;
      }
    }
    if (name === null) throw new LineError('a sample with no metric name');
    if (!isBlank(line[i])) throw new LineError(`${name}: expected a blank before the value`);
    while (isBlank(line[i])) i += 1;
    const valueEnd = scanWhile(line, i, (c) => !isBlank(c));
    const valueText = line.slice(i, valueEnd);
    if (valueText === '') throw new LineError(`${name}: missing value`);
    const value = parseFloatToken(valueText);
    if (value === null) throw new LineError(`${name}: value "${valueText}" is not a number`);
    i = valueEnd;
    while (isBlank(line[i])) i += 1;
    let timestampMs: number | null = null;
    if (i < line.length && line[i] !== '#') {
      const tsEnd = scanWhile(line, i, (c) => !isBlank(c));
      timestampMs = parseTimestamp(line.slice(i, tsEnd), name);
      i = tsEnd;
      while (isBlank(line[i])) i += 1;
    }
    // OpenMetrics exemplars (`# {trace_id="…"} 1.0`) follow a `#`; they are not needed here.
    if (i < line.length && line[i] !== '#') throw new LineError(`${name}: unexpected "${line.slice(i, i + 20)}" after the value`);
    const family = this.#familyOf(name);
    this.#out.samples.push({ name, labels, value, timestampMs, family: family?.name ?? name, type: family?.type ?? 'untyped' });
  }
}

/** Parses a whole exposition text. */
export function parseExposition(text: string, options: ParserOptions = {}): Exposition {
  const parser = new ExpositionParser(options);
  parser.feed(text);
  return parser.end();
}

function scanWhile(line: string, from: number, ok: (c: string) => boolean): number {
  let i = from;
  while (i < line.length && ok(line[i]!)) i += 1;
  return i;
}

/** A bare metric name at `from`, or null (and `from`) when none starts there. */
function readMetricName(line: string, from: number): [string | null, number] {
  const c = line[from];
  if (c === undefined || !isNameStart(c)) return [null, from];
  const end = scanWhile(line, from + 1, isNameChar);
  return [line.slice(from, end), end];
}

function parseTimestamp(token: string, name: string): number {
  // Text format 0.0.4: integer milliseconds. OpenMetrics: seconds with a fraction.
  if (/^-?\d+$/.test(token)) return Number(token);
  if (/^-?\d+\.\d+$/.test(token)) return Math.round(Number(token) * 1000);
  throw new LineError(`${name}: timestamp "${token}" is not a number`);
}

function unescapeHelp(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i]!;
    if (c === '\\' && (text[i + 1] === '\\' || text[i + 1] === 'n')) {
      out += text[i + 1] === 'n' ? '\n' : '\\';
      i += 1;
    } else out += c;
  }
  return out;
}

type LabelState = 'before_name' | 'name' | 'after_name' | 'before_value' | 'value' | 'escape' | 'after_value';

/** The label set after `{`: a state machine over characters, up to and including `}`. */
function readLabels(line: string, from: number): { labels: Record<string, string>; quotedName: string | null; next: number } {
  const labels: Record<string, string> = {};
  let quotedName: string | null = null;
  let state: LabelState = 'before_name';
  let name = '';
  let value = '';
  let quotedKey = false;
  for (let i = from; i < line.length; i += 1) {
    const c = line[i]!;
    switch (state) {
      case 'before_name':
        if (isBlank(c)) break;
        if (c === '}') return { labels, quotedName, next: i + 1 };
        if (c === '"') {
          // A quoted string: a UTF-8 label name (if `=` follows) or the metric name.
          quotedKey = true;
          name = '';
          value = '';
          state = 'value';
          break;
        }
        if (!isLabelStart(c)) throw new LineError(`label name cannot start with "${c}"`);
        quotedKey = false;
        name = c;
        state = 'name';
        break;
      case 'name':
        if (isLabelChar(c)) {
          name += c;
          break;
        }
        state = 'after_name';
        i -= 1;
        break;
      case 'after_name':
        if (isBlank(c)) break;
        if (c !== '=') throw new LineError(`label ${name}: expected "=", got "${c}"`);
        state = 'before_value';
        break;
      case 'before_value':
        if (isBlank(c)) break;
        if (c !== '"') throw new LineError(`label ${name}: the value must be quoted`);
        value = '';
        state = 'value';
        break;
      case 'value':
        if (c === '\\') state = 'escape';
        else if (c === '"') state = 'after_value';
        else value += c;
        break;
      case 'escape':
        if (c === '\\') value += '\\';
        else if (c === '"') value += '"';
        else if (c === 'n') value += '\n';
        else throw new LineError(`label ${quotedKey ? value : name}: invalid escape "\\${c}"`);
        state = 'value';
        break;
      case 'after_value': {
        if (isBlank(c)) break;
        if (quotedKey && c === '=') {
          // `"label.name"="value"`: what was read is the name.
          name = value;
          quotedKey = false;
          state = 'before_value';
          break;
        }
        if (quotedKey) {
          if (quotedName !== null) throw new LineError('two quoted metric names in one label set');
          quotedName = value;
          quotedKey = false;
        } else {
          if (Object.hasOwn(labels, name)) throw new LineError(`label ${name} appears twice`);
          Object.defineProperty(labels, name, { value, enumerable: true, writable: true, configurable: true });
        }
        if (c === ',') state = 'before_name';
        else if (c === '}') return { labels, quotedName, next: i + 1 };
        else throw new LineError(`expected "," or "}" after a label value, got "${c}"`);
        break;
      }
    }
  }
  throw new LineError(state === 'value' || state === 'escape' ? 'a label value is not closed on its line' : 'the label set is not closed with "}"');
}
