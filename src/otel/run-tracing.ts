// A run's tracing, put together: the export (its resource: service.name and the resource attributes) and the
// spans made from the run's events. The run subscribes `onEvent` to its bus and calls `finish` once the
// parts it started have stopped, before summary.json is written (it reports what the export did).
import { hostname } from 'node:os';
import type { OtlpExport } from '../config/index.js';
import type { RunEvent } from '../types/index.js';
import type { EngineSpan } from '../engine/index.js';
import type { EngineTraceEnd, TracingSummary } from '../analysis/index.js';
import { EngineSpanExport } from './engine-spans.js';
import { SpanExporter } from './exporter.js';
import { RunSpans } from './run-spans.js';

export interface RunTracingOptions {
  settings: OtlpExport;
  workload: string;
  run: string;
  model: string;
  version: string;
  /** Wall-clock start of the run (Unix ms). */
  startMs: number;
  scrub: (text: string) => string;
  log: (line: string) => void;
}

export interface RunTracing {
  /** The run's own trace (its run and conversation spans). */
  readonly traceId: string;
  onEvent(e: RunEvent): void;
  /** The embedded engine's spans, to export under its servers' names. */
  engineSpans(spans: readonly EngineSpan[]): void;
  /** Where the engine's traces of the requests that ended badly end (run ms), for the diagnosis. */
  engineTraceEnds(): EngineTraceEnd[];
  /** Ends the run's span, sends what is queued within the flush bound; never throws. */
  finish(status: string, reason: string | null): Promise<TracingSummary>;
}

export function startRunTracing(o: RunTracingOptions): RunTracing {
  const exporter = new SpanExporter({
    settings: o.settings,
    source: {
      resource: { 'host.name': hostname(), ...o.settings.resourceAttributes, 'service.name': o.settings.serviceName, 'service.version': o.version },
      scope: { name: 'roundload', version: o.version },
    },
    log: o.log,
    what: "roundload's spans",
  });
  const spans = new RunSpans({ emit: (s) => exporter.add(s), scrub: o.scrub, workload: o.workload, run: o.run, model: o.model, startMs: o.startMs });
  let engine: EngineSpanExport | null = null;
  o.log(`tracing: exporting roundload's spans to ${exporter.stats().endpoint} (${o.settings.protocol}); the run's trace is ${spans.traceId}`);
  return {
    traceId: spans.traceId,
    onEvent: (e) => spans.onEvent(e),
    engineSpans(list) {
      engine ??= new EngineSpanExport({ settings: o.settings, version: o.version, log: o.log });
      engine.add(list);
    },
    engineTraceEnds: () => engine?.ends(o.startMs) ?? [],
    async finish(status, reason) {
      spans.finish(status, reason, Date.now());
      const [own, engineStats] = await Promise.all([exporter.finish(), engine?.finish() ?? Promise.resolve(null)]);
      return { ...own, run_trace_id: spans.traceId, ...(engineStats === null ? {} : { engine: engineStats }) };
    },
  };
}
