// The embedded engine's spans (engine/tracing.ts) exported like roundload's own, each server under its own
// service.name (`engine-router`, `engine-prefill`, `engine-decode`, `engine`), as a real deployment's servers
// each export theirs. A server's request span is SERVER, its stages INTERNAL; one that ended badly, or was
// still open when the engine stopped, is ERROR with why.
import type { OtlpExport } from '../config/index.js';
import type { EngineSpan } from '../engine/index.js';
import { SpanExporter, type SpanExportStats } from './exporter.js';
import { SPAN_KIND, STATUS_CODE, type OtelSpan } from './span.js';

export interface EngineSpanExportOptions {
  settings: OtlpExport;
  version: string;
  log: (line: string) => void;
}

export class EngineSpanExport {
  readonly #o: EngineSpanExportOptions;
  readonly #exporters = new Map<string, SpanExporter>();

  constructor(o: EngineSpanExportOptions) {
    this.#o = o;
  }

  add(spans: readonly EngineSpan[]): void {
    for (const s of spans) this.#exporter(s.service).add(toOtel(s));
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
