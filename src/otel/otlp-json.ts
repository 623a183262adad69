// OTLP/HTTP's JSON body: the protobuf messages' JSON mapping with OTLP's exceptions — trace and span ids as
// hex (not base64), enums as numbers, 64-bit integers as decimal strings, lowerCamelCase field names.
import { unixNanos, type Attributes, type AttrValue, type OtelSpan, type SpanSource } from './span.js';

type AnyValueJson = { stringValue: string } | { boolValue: boolean } | { intValue: string } | { doubleValue: number };

function anyValue(v: AttrValue): AnyValueJson {
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  // A negative integer goes as a double, as in the protobuf form (otlp-proto.ts).
  return Number.isSafeInteger(v) && v >= 0 ? { intValue: String(v) } : { doubleValue: v };
}

function attributes(attrs: Attributes | undefined): { key: string; value: AnyValueJson }[] {
  return Object.entries(attrs ?? {}).map(([key, value]) => ({ key, value: anyValue(value) }));
}

function span(s: OtelSpan): Record<string, unknown> {
  return {
    traceId: s.traceId,
    spanId: s.spanId,
    ...(s.parentSpanId === null ? {} : { parentSpanId: s.parentSpanId }),
    name: s.name,
    kind: s.kind,
    startTimeUnixNano: unixNanos(s.startMs).toString(),
    endTimeUnixNano: unixNanos(s.endMs).toString(),
    attributes: attributes(s.attributes),
    events: s.events.map((e) => ({ timeUnixNano: unixNanos(e.timeMs).toString(), name: e.name, attributes: attributes(e.attributes) })),
    links: s.links.map((l) => ({ traceId: l.traceId, spanId: l.spanId, attributes: attributes(l.attributes) })),
    // Fields at their default are left out, as the protobuf form leaves them out.
    status: { ...(s.status.message === '' ? {} : { message: s.status.message }), ...(s.status.code === 0 ? {} : { code: s.status.code }) },
  };
}

/** The ExportTraceServiceRequest as OTLP/JSON text. */
export function encodeTraceRequestJson(source: SpanSource, spans: readonly OtelSpan[]): string {
  return JSON.stringify({
    resourceSpans: [{ resource: { attributes: attributes(source.resource) }, scopeSpans: [{ scope: source.scope, spans: spans.map(span) }] }],
  });
}
