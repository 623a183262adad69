// OpenTelemetry for a run: roundload's spans (a request's, its conversation's, the run's) exported over
// OTLP/HTTP (protobuf or JSON) to the receiver `tracing.otlp` or the OTEL_EXPORTER_OTLP_* variables name
// (docs/tracing.md). Loaded only when the export is on: a run without it never imports this folder.
export { startRunTracing, type RunTracing } from './run-tracing.js';
export { SpanExporter } from './exporter.js';
export type { OtelSpan } from './span.js';
export { EngineSpanExport } from './engine-spans.js';
