// The embedded engine's spans (engine/tracing.ts) exported like roundload's own, each server under its own
// service.name (`engine-router`, `engine-prefill`, `engine-decode`, `engine`), as a real deployment's servers
// each export theirs. A server's request span is SERVER, its stages INTERNAL; one that ended badly, or was
// still open when the engine stopped, is ERROR with why.
import type { EngineTraceEnd } from '../analysis/index.js';
import type { OtlpExport } from '../config/index.js';
import type { EngineSpan } from '../engine/index.js';
import { SpanExporter, type SpanExportStats } from './exporter.js';
import { SPAN_KIND, STATUS_CODE, type OtelSpan } from './span.js';

export interface EngineSpanExportOptions {
  settings: OtlpExport;
  version: string;
  log: (line: string) => void;
}

/** Traces of failed requests whose end is kept for the diagnosis. */
const MAX_ENDS = 2000;

export class EngineSpanExport {
  readonly #o: EngineSpanExportOptions;
  readonly #exporters = new Map<string, SpanExporter>();
  /** Per trace, where the engine's trace of a request that ended badly ends: a worker's over the router's, one
   * still open over one that ended, then the later. */
  readonly #ends = new Map<string, EngineTraceEnd & { rank: number }>();

  constructor(o: EngineSpanExportOptions) {
    this.#o = o;
  }

  add(spans: readonly EngineSpan[]): void {
    for (const s of spans) this.#exporter(s.service).add(toOtel(s));
    for (const s of spans) if (!s.stage && s.error !== null) this.#keepEnd(s, spans);
  }

  /** Where the engine's traces of the requests that ended badly end, in run ms from `runStartMs` (Unix ms). */
  ends(runStartMs: number): EngineTraceEnd[] {
    return [...this.#ends.values()].map(({ rank: _rank, ...e }) => ({ ...e, stage_from_ms: e.stage_from_ms === null ? null : e.stage_from_ms - runStartMs, at_ms: e.at_ms - runStartMs }));
  }

  #keepEnd(root: EngineSpan, batch: readonly EngineSpan[]): void {
    const stage = batch.filter((x) => x.parentSpanId === root.spanId && x.stage).at(-1) ?? null;
    const open = root.attributes['engine.request.open'] === true;
    const rank = (root.service === 'router' ? 0 : 2) + (open ? 1 : 0);
    const at = root.endMs ?? root.startMs;
    const kept = this.#ends.get(root.traceId);
    if (kept !== undefined && (kept.rank > rank || (kept.rank === rank && kept.at_ms >= at))) return;
    if (kept === undefined && this.#ends.size >= MAX_ENDS) return;
    const server = root.service === 'engine' ? 'engine' : `engine-${root.service}`;
    this.#ends.set(root.traceId, { trace_id: root.traceId, server, stage: stage?.name ?? null, stage_from_ms: stage?.startMs ?? null, at_ms: at, open, error: root.error, rank });
  }

  /** Every server's export flushed (each within the flush bound, together); their figures added up. */
  async finish(): Promise<{ spans: number; exported: number; dropped: number }> {
    const all: SpanExportStats[] = await Promise.all([...this.#exporters.values()].map((e) => e.finish()));
    return all.reduce((t, s) => ({ spans: t.spans + s.spans, exported: t.exported + s.exported, dropped: t.dropped + s.dropped }), { spans: 0, exported: 0, dropped: 0 });
  }

  #exporter(service: string): SpanExporter {
    let e = this.#exporters.get(service);
    if (e === undefined) {
      const name = service === 'engine' ? 'engine' : `engine-${service}`;
      e = new SpanExporter({
        settings: this.#o.settings,
        source: { resource: { 'service.name': name, 'service.version': this.#o.version }, scope: { name: 'roundload-engine', version: this.#o.version } },
        log: this.#o.log,
        what: `the engine's ${service} spans`,
      });
      this.#exporters.set(service, e);
    }
    return e;
  }
}

function toOtel(s: EngineSpan): OtelSpan {
  return {
    traceId: s.traceId,
    spanId: s.spanId,
    parentSpanId: s.parentSpanId,
    name: s.name,
    kind: s.stage ? SPAN_KIND.internal : SPAN_KIND.server,
    startMs: s.startMs,
    endMs: s.endMs ?? s.startMs,
    attributes: s.attributes,
    events: [],
    links: [],
    status: s.error === null ? { code: STATUS_CODE.unset, message: '' } : { code: STATUS_CODE.error, message: s.error },
  };
}
