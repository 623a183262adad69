// Does the path pass a stream through, or hold it and send it whole? A streaming chat request; each SSE event
// is stamped with the arrival of the read that completed it. Events spread over time pass through; events
// that all land in one burst after a wait were buffered — judged against the server's own first-token time
// when it tells it (the embedded engine's `: engine-first-token-ms=N` comment), else against the wait itself.
import type { ChunkArrival, Exchange, ProbeConnection } from './exchange.js';
import { failure } from './exchange.js';

export interface StreamResult {
  /** `passes`: events arrived spread out; `buffers`: all in one burst, held back; `unjudged`: too short or
   * too fast to tell, or the request failed (`detail` says). */
  kind: 'passes' | 'buffers' | 'unjudged';
  /** ms from send to the first body byte, or null. */
  firstByteMs: number | null;
  /** SSE data events received. */
  events: number;
  /** ms from the first to the last event's arrival. */
  spreadMs: number;
  /** Arrival bursts: events less than BURST_GAP_MS apart count as one. */
  bursts: number;
  /** The server's own first-token time (from its arrival), when it sent one. */
  serverFirstTokenMs: number | null;
  detail: string;
}

/** Arrivals closer than this are one burst (one read, or reads of one flush). */
export const BURST_GAP_MS = 10;
/** Fewer events than this cannot show a spread. */
const MIN_EVENTS = 4;
/** A first byte this much later than the server's first token was held on the way. */
const HELD_MS = 50;
/** With no server timing: a single burst after this long a wait is a buffered stream. */
const LONG_WAIT_MS = 500;

const FIRST_TOKEN_COMMENT = /^: ?engine-first-token-ms=([\d.]+)/m;

/** The arrival time of each SSE data event (but `[DONE]`), and the server's first-token comment if any. */
export function eventArrivals(chunks: readonly ChunkArrival[]): { arrivals: number[]; serverFirstTokenMs: number | null } {
  let pending = '';
  const arrivals: number[] = [];
  let serverFirstTokenMs: number | null = null;
  for (const chunk of chunks) {
    pending += chunk.text.replace(/\r\n/g, '\n');
    let end = pending.indexOf('\n\n');
    while (end >= 0) {
      const event = pending.slice(0, end);
      pending = pending.slice(end + 2);
      const comment = FIRST_TOKEN_COMMENT.exec(event);
      if (comment !== null && serverFirstTokenMs === null) serverFirstTokenMs = Number(comment[1]);
      if (/^data:/m.test(event) && !/^data: ?\[DONE\]/m.test(event)) arrivals.push(chunk.atMs);
      end = pending.indexOf('\n\n');
    }
  }
  return { arrivals, serverFirstTokenMs };
}

export function countBursts(arrivals: readonly number[]): number {
  let bursts = 0;
  for (let i = 0; i < arrivals.length; i += 1) if (i === 0 || arrivals[i]! - arrivals[i - 1]! >= BURST_GAP_MS) bursts += 1;
  return bursts;
}

export function judgeStream(x: Pick<Exchange, 'chunks' | 'status'>): StreamResult {
  const { arrivals, serverFirstTokenMs } = eventArrivals(x.chunks);
  const firstByteMs = x.chunks[0]?.atMs ?? null;
  const spreadMs = arrivals.length === 0 ? 0 : arrivals[arrivals.length - 1]! - arrivals[0]!;
  const bursts = countBursts(arrivals);
  const base = { firstByteMs, events: arrivals.length, spreadMs, bursts, serverFirstTokenMs };
  if (arrivals.length < MIN_EVENTS) return { ...base, kind: 'unjudged', detail: `only ${arrivals.length} events: too short to judge` };
  if (bursts > 2) return { ...base, kind: 'passes', detail: `${arrivals.length} events in ${bursts} bursts over ${(spreadMs / 1000).toFixed(2)} s` };
  const firstEventMs = arrivals[0]!;
  if (serverFirstTokenMs !== null) {
    const heldMs = firstEventMs - serverFirstTokenMs;
    if (heldMs >= HELD_MS) return { ...base, kind: 'buffers', detail: `${arrivals.length} events arrived within ${Math.round(spreadMs)} ms, ${Math.round(heldMs)} ms after the server's first token` };
    return { ...base, kind: 'unjudged', detail: `${arrivals.length} events in ${bursts} bursts, but the server made them as fast: too fast to judge` };
  }
  if (firstEventMs >= LONG_WAIT_MS)
    return { ...base, kind: 'buffers', detail: `${arrivals.length} events arrived within ${Math.round(spreadMs)} ms after a wait of ${(firstEventMs / 1000).toFixed(2)} s` };
  return { ...base, kind: 'unjudged', detail: `${arrivals.length} events in ${bursts} bursts within ${Math.round(firstEventMs)} ms: too fast to judge` };
}

/** A short question with a long enough answer to show a spread (the server decides its length). */
export function streamBody(model: string): string {
  return JSON.stringify({ model, stream: true, max_tokens: 64, messages: [{ role: 'user', content: 'Count from one to sixty, one number a line.' }] });
}

export async function measureStream(connection: ProbeConnection, options: { model: string; timeoutMs: number; onProgress(line: string): void }): Promise<StreamResult> {
  options.onProgress('stream: a streaming request, timing each event');
  const x = await connection.send({ method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: streamBody(options.model) }, { timeoutMs: options.timeoutMs });
  if (x.status !== 200 || x.endMs === null) {
    const judged = judgeStream({ chunks: [], status: x.status });
    return { ...judged, detail: `the streaming request failed (${x.endMs === null ? failure(x) : `HTTP ${x.status}`})` };
  }
  return judgeStream(x);
}
