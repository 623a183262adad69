// roundload's own spans, made from the run's events: one CLIENT span per request, in the request's own
// trace (its record's `trace_id`; its span id is the `traceparent`'s parent id, so the server's spans are its
// children); one span per conversation and one for the run, in the run's trace, the conversation's a child
// of the run's. A request's trace is its own (small, found by its id), so it points at its conversation by
// a span link, OpenTelemetry's way to tie one trace to another. Secrets never go in: no header, no URL, no
// body; an error's message goes through the run's scrubber.
import { nextTraceIds } from '../util/index.js';
import type { RequestRecord, RunEvent } from '../types/index.js';
import { SPAN_KIND, STATUS_CODE, type Attributes, type OtelSpan, type SpanEvent } from './span.js';

export interface RunSpansOptions {
  /** Where each finished span goes (the exporter's queue). */
  emit: (span: OtelSpan) => void;
  /** The run's secret scrubber, for the text of error messages. */
  scrub: (text: string) => string;
  /** The workload's name, the results folder's name, the model asked for. */
  workload: string;
  run: string;
  model: string;
  /** Wall-clock start of the run (Unix ms). */
  startMs: number;
}

/** A conversation's span while it goes on: opened at its first request's record, ended by its last. */
interface OpenConversation {
  spanId: string;
  agent: number;
  startMs: number;
  endMs: number;
  requests: number;
  hangs: number;
  errors: number;
}

/** Characters of an error message kept in a span's status. */
const MESSAGE_CHARS = 300;

export class RunSpans {
  readonly #o: RunSpansOptions;
  readonly #run = nextTraceIds();
  readonly #open = new Map<string, OpenConversation>();
  /** Each agent's conversation under way: its next one closes it (an agent runs one at a time). */
  readonly #current = new Map<number, string>();
  #requests = 0;

  constructor(o: RunSpansOptions) {
    this.#o = o;
  }

  /** The run's trace id (its run and conversation spans). */
  get traceId(): string {
    return this.#run.traceId;
  }

  onEvent(e: RunEvent): void {
    if (e.kind === 'request') this.#request(e.record);
    else if (e.kind === 'conversation_end') this.#close(e.conversation);
  }

  /** The run ended: the conversations still open, then the run's own span. */
  finish(status: string, reason: string | null, endMs: number): void {
    for (const id of [...this.#open.keys()]) this.#close(id);
    const failed = status === 'failed';
    this.#o.emit({
      traceId: this.#run.traceId,
      spanId: this.#run.spanId,
      parentSpanId: null,
      name: `run ${this.#o.workload}`,
      kind: SPAN_KIND.internal,
      startMs: this.#o.startMs,
      endMs: Math.max(this.#o.startMs, endMs),
      attributes: { 'roundload.workload': this.#o.workload, 'roundload.run': this.#o.run, 'roundload.status': status, 'roundload.requests': this.#requests },
      events: [],
      links: [],
      status: failed ? { code: STATUS_CODE.error, message: this.#o.scrub(reason ?? 'failed').slice(0, MESSAGE_CHARS) } : { code: STATUS_CODE.unset, message: '' },
    });
  }

  #request(r: RequestRecord): void {
    this.#requests += 1;
    const conversation = this.#conversation(r);
    if (r.trace_id === undefined || r.span_id === undefined) return;
    const startMs = Date.parse(r.t);
    if (!Number.isFinite(startMs)) return;
    this.#o.emit({
      traceId: r.trace_id,
      spanId: r.span_id,
      parentSpanId: null,
      name: `chat ${this.#o.model}`,
      kind: SPAN_KIND.client,
      startMs,
      endMs: startMs + r.e2e_ms,
      attributes: requestAttributes(r, this.#o.model),
      events: requestEvents(r, startMs),
      links: [{ traceId: this.#run.traceId, spanId: conversation.spanId, attributes: { 'roundload.link': 'conversation' } }],
      status: this.#status(r),
    });
  }

  #status(r: RequestRecord): OtelSpan['status'] {
    if (r.status === 'hang') {
      const h = r.hang;
      const what = h === null ? 'hang' : `hang at ${h.phase}: ${h.deadline} ${h.deadline_ms ?? '?'} ms passed`;
      return { code: STATUS_CODE.error, message: what };
    }
    if (r.status === 'error') return { code: STATUS_CODE.error, message: this.#o.scrub(`${r.error?.class ?? 'error'}: ${r.error?.message ?? ''}`).slice(0, MESSAGE_CHARS) };
    return { code: STATUS_CODE.unset, message: '' };
  }

  /** The request's conversation span, opened at its first request; the agent's previous one is closed. */
  #conversation(r: RequestRecord): OpenConversation {
    const previous = this.#current.get(r.agent);
    if (previous !== undefined && previous !== r.conversation) this.#close(previous);
    this.#current.set(r.agent, r.conversation);
    const startMs = Date.parse(r.t);
    const endMs = startMs + r.e2e_ms;
    let c = this.#open.get(r.conversation);
    if (c === undefined) {
      c = { spanId: nextTraceIds().spanId, agent: r.agent, startMs, endMs, requests: 0, hangs: 0, errors: 0 };
      this.#open.set(r.conversation, c);
    }
    c.startMs = Math.min(c.startMs, startMs);
    c.endMs = Math.max(c.endMs, endMs);
    c.requests += 1;
    if (r.status === 'hang') c.hangs += 1;
    if (r.status === 'error') c.errors += 1;
    return c;
  }

  #close(id: string): void {
    const c = this.#open.get(id);
    if (c === undefined) return;
    this.#open.delete(id);
    if (this.#current.get(c.agent) === id) this.#current.delete(c.agent);
    this.#o.emit({
      traceId: this.#run.traceId,
      spanId: c.spanId,
      parentSpanId: this.#run.spanId,
      name: `conversation ${id}`,
      kind: SPAN_KIND.internal,
      startMs: c.startMs,
      endMs: c.endMs,
      attributes: { 'roundload.conversation': id, 'roundload.agent': c.agent, 'roundload.requests': c.requests, 'roundload.hangs': c.hangs, 'roundload.errors': c.errors },
      events: [],
      links: [],
      status: c.hangs > 0 ? { code: STATUS_CODE.error, message: `${c.hangs} hung request${c.hangs === 1 ? '' : 's'}` } : { code: STATUS_CODE.unset, message: '' },
    });
  }
}

function requestAttributes(r: RequestRecord, model: string): Attributes {
  const a: Record<string, string | number | boolean> = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.request.model': model,
    'roundload.agent': r.agent,
    'roundload.conversation': r.conversation,
    'roundload.round': r.round,
    'roundload.phase': r.phase,
    'roundload.path': r.path,
    'roundload.status': r.status,
  };
  if (r.request_id !== undefined) a['roundload.request_id'] = r.request_id;
  if (r.connection !== null) {
    a['roundload.connection.id'] = r.connection.id;
    a['roundload.connection.nth'] = r.connection.nth;
  }
  if (r.http_status !== null) a['http.response.status_code'] = r.http_status;
  if (r.prompt_tokens !== null) a['gen_ai.usage.input_tokens'] = r.prompt_tokens;
  if (r.completion_tokens !== null) a['gen_ai.usage.output_tokens'] = r.completion_tokens;
  if (r.attempt !== undefined) a['roundload.attempt'] = r.attempt;
  if (r.error !== null) a['error.type'] = r.error.class;
  if (r.hang !== null) {
    a['error.type'] = 'hang';
    a['roundload.hang.phase'] = r.hang.phase;
    a['roundload.hang.deadline'] = r.hang.deadline;
  }
  return a;
}

/** The moments the client saw: headers, first token, first content, last token (those that came). */
function requestEvents(r: RequestRecord, startMs: number): SpanEvent[] {
  const at: [string, number | null | undefined][] = [
    ['headers', r.headers_ms],
    ['first_token', r.ttft_ms],
    ['first_content', r.ttfc_ms],
    ['last_token', r.last_token_ms],
  ];
  return at.flatMap(([name, ms]) => (ms === null || ms === undefined ? [] : [{ name, timeMs: startMs + ms }]));
}
