// Reading a trace back: the header, the request lines in order of arrival, contents by hash, connection closes.
// A torn last line (a killed recorder) is skipped and reported; anything else malformed is an error located by
// line number.
import { readFileSync } from 'node:fs';
import { TraceError } from '../errors.js';
import { TRACE_FORMAT, TRACE_VERSION, type TraceClose, type TraceHeader, type TraceIncomplete, type TraceRequest } from './types.js';
import { isObject } from '../util/index.js';

export interface Trace {
  file: string;
  header: TraceHeader;
  /** Sorted by `start_ms`. */
  requests: TraceRequest[];
  /** With `--content`: messages and tools arrays by hash. */
  contents: Map<string, Record<string, unknown>>;
  tools: Map<string, unknown[]>;
  closes: TraceClose[];
  /** Lines skipped: a torn last line of a killed recorder. */
  skipped: { line: number; sample: string }[];
  /** The recorder stopped recording early (its volume was full, failing or stalled), or null. */
  incomplete: TraceIncomplete | null;
}

const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** What is wrong with a request line, or null. */
function requestProblem(v: Record<string, unknown>): string | null {
  if (!isNum(v.start_ms) || v.start_ms < 0) return 'start_ms must be a number ≥ 0';
  if (typeof v.conversation !== 'string' || v.conversation === '') return 'conversation must be a non-empty string';
  if (!isNum(v.round) || v.round < 1) return 'round must be a number ≥ 1';
  if (v.think_ms !== null && !isNum(v.think_ms)) return 'think_ms must be a number or null';
  const c = v.connection;
  if (c !== null && !(isObject(c) && isNum(c.id) && isNum(c.nth))) return 'connection must be {id, nth, idle_ms} or null';
  const r = v.request;
  if (!isObject(r) || !Array.isArray(r.messages)) return 'request.messages must be a list';
  for (const [i, m] of r.messages.entries()) {
    if (!isObject(m) || typeof m.role !== 'string' || !isNum(m.chars) || m.chars < 0 || typeof m.hash !== 'string') return `request.messages[${i}] must have role, chars and hash`;
  }
  if (r.tools !== null && !(isObject(r.tools) && isNum(r.tools.count) && isNum(r.tools.chars) && Array.isArray(r.tools.names))) return 'request.tools must be {count, chars, hash, names} or null';
  if (!isObject(v.response)) return 'response must be an object';
  return null;
}

/** A request line with the names of this version: an older trace's `response.ttfc_ms` (the first SSE data
 * event, renamed `first_chunk_ms` so that `ttfc_ms` means the first content token everywhere) read as the new. */
function withCurrentNames(v: Record<string, unknown>): TraceRequest {
  const response = v.response as Record<string, unknown>;
  if (!('ttfc_ms' in response) || 'first_chunk_ms' in response) return v as unknown as TraceRequest;
  const { ttfc_ms: firstChunkMs, ...rest } = response;
  return { ...v, response: { ...rest, first_chunk_ms: firstChunkMs } } as unknown as TraceRequest;
}

/** Reads and checks a trace file. @throws TraceError (exit 2) naming the file and line. */
export function readTrace(file: string): Trace {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (cause) {
    throw new TraceError(`cannot read trace ${file}: ${(cause as Error).message}`, { cause });
  }
  const lines = text.split('\n');
  // A file that ends without a newline was cut in the middle of its last line.
  const lastIndex = text.endsWith('\n') ? lines.length - 2 : lines.length - 1;
  let header: TraceHeader | null = null;
  const trace: Omit<Trace, 'header'> = { file, requests: [], contents: new Map(), tools: new Map(), closes: [], skipped: [], incomplete: null };
  for (let i = 0; i <= lastIndex; i += 1) {
    const raw = lines[i] ?? '';
    if (raw.trim() === '') continue;
    const where = `${file}:${i + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      if (i === lastIndex) {
        trace.skipped.push({ line: i + 1, sample: raw.slice(0, 80) });
        continue;
      }
      throw new TraceError(`${where}: not a JSON line: ${raw.slice(0, 80)}`);
    }
    if (!isObject(value)) throw new TraceError(`${where}: a trace line must be a JSON object`);
    if (header === null) {
      if (value.kind !== 'header' || value.format !== TRACE_FORMAT)
        throw new TraceError(`${where}: not a roundload trace (its first line must be the header, kind "header", format "${TRACE_FORMAT}"); convert other formats with roundload trace import`);
      if (value.version !== TRACE_VERSION) throw new TraceError(`${where}: trace version ${String(value.version)}; this roundload reads version ${TRACE_VERSION}`);
      header = value as unknown as TraceHeader;
      continue;
    }
    switch (value.kind) {
      case 'request': {
        const problem = requestProblem(value);
        if (problem !== null) throw new TraceError(`${where}: ${problem}`);
        trace.requests.push(withCurrentNames(value));
        break;
      }
      case 'content':
        if (typeof value.hash === 'string' && isObject(value.message)) trace.contents.set(value.hash, value.message);
        break;
      case 'tools':
        if (typeof value.hash === 'string' && Array.isArray(value.tools)) trace.tools.set(value.hash, value.tools);
        break;
      case 'close':
        trace.closes.push(value as unknown as TraceClose);
        break;
      case 'incomplete':
        if (!isNum(value.at_ms) || typeof value.reason !== 'string' || !isNum(value.requests_not_recorded))
          throw new TraceError(`${where}: an incomplete line must have at_ms, reason and requests_not_recorded`);
        trace.incomplete = value as unknown as TraceIncomplete;
        break;
      case 'header':
        throw new TraceError(`${where}: a second header: two recordings were written to one file; record each to its own file`);
      default:
        throw new TraceError(`${where}: unknown line kind ${JSON.stringify(value.kind)} (header, request, content, tools, close or incomplete)`);
    }
  }
  if (header === null) throw new TraceError(`${file}: empty trace (no header line)`);
  trace.requests.sort((a, b) => a.start_ms - b.start_ms || a.seq - b.seq);
  return { ...trace, header };
}
