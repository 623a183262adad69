// OTLP/HTTP's protobuf body: an ExportTraceServiceRequest, written by hand (util's ProtoWriter). Field numbers
// are those of opentelemetry-proto's collector/trace/v1/trace_service.proto, trace/v1/trace.proto,
// common/v1/common.proto and resource/v1/resource.proto; the tests decode what this writes with the
// official definitions.
import { FIXED64, ProtoWriter, VARINT } from '../util/index.js';
import { unixNanos, type Attributes, type AttrValue, type OtelSpan, type SpanEvent, type SpanLink, type SpanSource } from './span.js';

/** `AnyValue { string_value = 1; bool_value = 2; int64 int_value = 3; double double_value = 4; }` */
function anyValue(v: AttrValue): Uint8Array {
  const w = new ProtoWriter();
  if (typeof v === 'string') w.string(1, v);
  else if (typeof v === 'boolean') {
    w.tag(2, VARINT);
    w.varint(v ? 1 : 0);
  } else if (Number.isSafeInteger(v) && v >= 0) {
    w.tag(3, VARINT);
    w.varint(v);
  } else {
    // A negative integer would need a 10-byte two's complement varint: as a double it reads the same.
    w.tag(4, FIXED64);
    w.double(v);
  }
  return w.finish();
}

/** `KeyValue { string key = 1; AnyValue value = 2; }`, one per attribute, as `field` of the parent. */
function attributes(w: ProtoWriter, field: number, attrs: Attributes | undefined): void {
  if (attrs === undefined) return;
  for (const [key, value] of Object.entries(attrs)) {
    const kv = new ProtoWriter();
    kv.string(1, key);
    kv.field(2, anyValue(value));
    w.field(field, kv.finish());
  }
}

function hex(id: string): Uint8Array {
  return Buffer.from(id, 'hex');
}

/** `Event { fixed64 time_unix_nano = 1; string name = 2; repeated KeyValue attributes = 3; }` */
function event(e: SpanEvent): Uint8Array {
  const w = new ProtoWriter();
  w.tag(1, FIXED64);
  w.fixed64(unixNanos(e.timeMs));
  w.string(2, e.name);
  attributes(w, 3, e.attributes);
  return w.finish();
}

/** `Link { bytes trace_id = 1; bytes span_id = 2; repeated KeyValue attributes = 4; }` */
function link(l: SpanLink): Uint8Array {
  const w = new ProtoWriter();
  w.field(1, hex(l.traceId));
  w.field(2, hex(l.spanId));
  attributes(w, 4, l.attributes);
  return w.finish();
}

/** `Span`: ids 1, 2, parent 4, name 5, kind 6, times 7-8, attributes 9, events 11, links 13, status 15. The
 * optional `flags` (16, newer protos) is left out: every span roundload sends is sampled. */
function span(s: OtelSpan): Uint8Array {
  const w = new ProtoWriter();
  w.field(1, hex(s.traceId));
  w.field(2, hex(s.spanId));
  if (s.parentSpanId !== null) w.field(4, hex(s.parentSpanId));
  w.string(5, s.name);
  w.tag(6, VARINT);
  w.varint(s.kind);
  w.tag(7, FIXED64);
  w.fixed64(unixNanos(s.startMs));
  w.tag(8, FIXED64);
  w.fixed64(unixNanos(s.endMs));
  attributes(w, 9, s.attributes);
  for (const e of s.events) w.field(11, event(e));
  for (const l of s.links) w.field(13, link(l));
  // `Status { string message = 2; StatusCode code = 3; }`
  const status = new ProtoWriter();
  if (s.status.message !== '') status.string(2, s.status.message);
  if (s.status.code !== 0) {
    status.tag(3, VARINT);
    status.varint(s.status.code);
  }
  w.field(15, status.finish());
  return w.finish();
}

/** `ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }` with one ResourceSpans
 * (`resource = 1`, `scope_spans = 2`) of one ScopeSpans (`scope = 1`, `spans = 2`). */
export function encodeTraceRequest(source: SpanSource, spans: readonly OtelSpan[]): Uint8Array {
  const resource = new ProtoWriter();
  attributes(resource, 1, source.resource);
  const scope = new ProtoWriter();
  scope.string(1, source.scope.name);
  scope.string(2, source.scope.version);
  const scopeSpans = new ProtoWriter();
  scopeSpans.field(1, scope.finish());
  for (const s of spans) scopeSpans.field(2, span(s));
  const resourceSpans = new ProtoWriter();
  resourceSpans.field(1, resource.finish());
  resourceSpans.field(2, scopeSpans.finish());
  const request = new ProtoWriter();
  request.field(1, resourceSpans.finish());
  return request.finish();
}
