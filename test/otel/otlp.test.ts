// The OTLP wire format itself: what roundload sends, decoded with the official opentelemetry-proto
// definitions (protobuf) and read as OTLP/JSON, the two the same; the settings resolved as the SDKs do.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeTraceRequest } from '../../src/otel/otlp-proto.js';
import { encodeTraceRequestJson } from '../../src/otel/otlp-json.js';
import { unixNanos, type OtelSpan, type SpanSource } from '../../src/otel/span.js';
import { resolveOtlp } from '../../src/config/index.js';
import { workloadSchema } from '../../src/config/schema.js';
import { UsageError } from '../../src/errors.js';
import { decodeProtobuf, spansOf } from '../helpers/otlp-receiver.js';

const SOURCE: SpanSource = { resource: { 'service.name': 'roundload', 'host.name': 'h1', 'deployment.environment': 'test' }, scope: { name: 'roundload', version: '0.1.0' } };

const SPAN: OtelSpan = {
  traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  spanId: '00f067aa0ba902b7',
  parentSpanId: null,
  name: 'chat deepseek-v4-flash',
  kind: 3,
  startMs: 1_765_000_000_123.375,
  endMs: 1_765_000_012_423.5,
  attributes: { 'roundload.conversation': 'a0-c1', 'roundload.round': 3, 'roundload.hang': true, ratio: 0.25, negative: -2, 'gen_ai.usage.input_tokens': 0, text: 'é "quoted" ✓' },
  events: [
    { name: 'headers', timeMs: 1_765_000_000_200.25 },
    { name: 'first_token', timeMs: 1_765_000_001_000 },
  ],
  links: [{ traceId: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', spanId: 'bbbbbbbbbbbbbbbb', attributes: { 'roundload.link': 'conversation' } }],
  status: { code: 2, message: 'hang at decode: stall_ms 5000 ms passed' },
};

const CHILD: OtelSpan = { ...SPAN, spanId: '1111111111111111', parentSpanId: '00f067aa0ba902b7', name: 'child', kind: 1, attributes: {}, events: [], links: [], status: { code: 0, message: '' } };

test('the protobuf body decodes with the official definitions into every field that was written', () => {
  const [root, child] = spansOf(decodeProtobuf(encodeTraceRequest(SOURCE, [SPAN, CHILD])));
  assert.ok(root && child);
  assert.equal(root.service, 'roundload');
  assert.deepEqual(root.resource, { 'service.name': 'roundload', 'host.name': 'h1', 'deployment.environment': 'test' });
  assert.equal(root.traceId, SPAN.traceId);
  assert.equal(root.spanId, SPAN.spanId);
  assert.equal(root.parentSpanId, '');
  assert.equal(root.name, SPAN.name);
  assert.equal(root.kind, 3);
  assert.equal(root.startTimeUnixNano, '1765000000123375000');
  assert.equal(root.endTimeUnixNano, '1765000012423500000');
  assert.deepEqual(root.attributes, {
    'roundload.conversation': 'a0-c1',
    'roundload.round': 3,
    'roundload.hang': true,
    ratio: 0.25,
    negative: -2,
    'gen_ai.usage.input_tokens': 0,
    text: 'é "quoted" ✓',
  });
  assert.deepEqual(root.events, [
    { name: 'headers', timeUnixNano: '1765000000200250000' },
    { name: 'first_token', timeUnixNano: '1765000001000000000' },
  ]);
  assert.deepEqual(root.links, [{ traceId: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', spanId: 'bbbbbbbbbbbbbbbb' }]);
  assert.deepEqual(root.status, { code: 2, message: 'hang at decode: stall_ms 5000 ms passed' });
  assert.equal(child.parentSpanId, '00f067aa0ba902b7');
  assert.deepEqual(child.status, { code: 0, message: '' });
});

test('the OTLP/JSON body is the protobuf one in its JSON mapping: hex ids, enums as numbers, 64-bit integers as strings', () => {
  const fromProto = decodeProtobuf(encodeTraceRequest(SOURCE, [SPAN, CHILD]));
  const fromJson = JSON.parse(encodeTraceRequestJson(SOURCE, [SPAN, CHILD])) as Record<string, unknown>;
  // Field for field the same object the official decoder makes of the protobuf body (its names are the JSON names).
  assert.deepEqual(withoutEmpty(fromJson), withoutEmpty(fromProto));
});

test('nanosecond times keep the fraction of a millisecond exactly', () => {
  assert.equal(unixNanos(1_765_000_000_123.375), 1_765_000_000_123_375_000n);
  assert.equal(unixNanos(0.001), 1000n);
});

const tracing = (over: Record<string, unknown> = {}) => workloadSchema.parse({ tracing: { otlp: over } }).tracing;

test('the endpoint comes from the workload, else OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as is, else OTEL_EXPORTER_OTLP_ENDPOINT with /v1/traces; none: no export', () => {
  assert.equal(resolveOtlp(tracing(), {}), null);
  assert.equal(resolveOtlp(tracing(), { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })?.url, 'http://c:4318/v1/traces');
  assert.equal(resolveOtlp(tracing(), { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/otlp/' })?.url, 'http://c:4318/otlp/v1/traces');
  assert.equal(resolveOtlp(tracing(), { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:9/x' })?.url, 'http://t:9/x');
  assert.equal(resolveOtlp(tracing({ endpoint: 'http://w:1' }), { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:9/x' })?.url, 'http://t:9/x');
  assert.equal(resolveOtlp(tracing({ traces_endpoint: 'http://w:1/in' }), { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:9/x' })?.url, 'http://w:1/in');
  assert.throws(
    () => resolveOtlp(tracing(), { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4317' }),
    (e) => e instanceof UsageError && /OTEL_EXPORTER_OTLP_ENDPOINT must be an http/.test(e.message),
  );
});

test('protocol, headers, service name and resource attributes follow the SDKs: traces-specific first, the workload over the environment', () => {
  const env = {
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=s%20ecret,bad, =x,tenant=t1',
    OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-attrs,deployment.environment=ci',
  };
  const a = resolveOtlp(tracing(), env)!;
  assert.equal(a.protocol, 'http/json');
  assert.deepEqual(a.headers, { 'x-api-key': 's ecret', tenant: 't1' });
  assert.equal(a.serviceName, 'from-attrs');
  assert.equal(resolveOtlp(tracing(), { ...env, OTEL_SERVICE_NAME: 'svc' })!.serviceName, 'svc');
  assert.equal(resolveOtlp(tracing(), { ...env, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' })!.protocol, 'http/protobuf');
  assert.equal(resolveOtlp(tracing({ protocol: 'http/protobuf' }), env)!.protocol, 'http/protobuf');
  assert.deepEqual(resolveOtlp(tracing(), { ...env, OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'a=1' })!.headers, { a: '1' });
  assert.deepEqual(resolveOtlp(tracing({ headers_env: 'MY_HEADERS' }), { ...env, MY_HEADERS: 'b=2' })!.headers, { b: '2' });
  assert.deepEqual(resolveOtlp(tracing({ resource_attributes: { 'deployment.environment': 'prod' } }), env)!.resourceAttributes, { 'service.name': 'from-attrs', 'deployment.environment': 'prod' });
  assert.equal(resolveOtlp(tracing(), { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })!.protocol, 'http/protobuf');
  assert.equal(resolveOtlp(tracing(), { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })!.serviceName, 'roundload');
  assert.throws(
    () => resolveOtlp(tracing(), { ...env, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }),
    (e) => e instanceof UsageError && /OTLP\/HTTP only/.test(e.message),
  );
});

/** The object without empty lists (the decoder makes one for every repeated field the body left out). */
function withoutEmpty(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutEmpty);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).flatMap(([k, x]) => (Array.isArray(x) && x.length === 0 ? [] : [[k, withoutEmpty(x)]])));
}
