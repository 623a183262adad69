// The span export off the requests' path: batched to a receiver in either protocol with the export's headers;
// bounded in memory (a full queue drops and counts); a dead collector (refused) and a slow one (never
// answers) cost the spans, counted, and the end's flush still returns within its bound.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { OtlpExport } from '../../src/config/index.js';
import { SpanExporter } from '../../src/otel/index.js';
import type { OtelSpan } from '../../src/otel/index.js';
import { nextTraceIds } from '../../src/util/index.js';
import { LoopDelay } from '../helpers/loop-delay.js';
import { otlpReceiver } from '../helpers/otlp-receiver.js';

function settings(url: string, over: Partial<OtlpExport> = {}): OtlpExport {
  return {
    url,
    protocol: 'http/protobuf',
    headers: {},
    serviceName: 'roundload',
    resourceAttributes: {},
    engine: true,
    maxQueueSpans: 1000,
    maxBatchSpans: 50,
    intervalMs: 20,
    timeoutMs: 5000,
    flushTimeoutMs: 5000,
    ...over,
  };
}

function span(i: number): OtelSpan {
  const ids = nextTraceIds();
  const startMs = Date.now();
  return {
    traceId: ids.traceId,
    spanId: ids.spanId,
    parentSpanId: null,
    name: `s${i}`,
    kind: 3,
    startMs,
    endMs: startMs + 5,
    attributes: { i },
    events: [],
    links: [],
    status: { code: 0, message: '' },
  };
}

const SOURCE = { resource: { 'service.name': 'roundload' }, scope: { name: 'roundload', version: 'test' } };

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

for (const protocol of ['http/protobuf', 'http/json'] as const) {
  test(`${protocol}: every span reaches the receiver in batches, with the export's headers and content type`, async (t) => {
    const receiver = await otlpReceiver(t);
    const lines: string[] = [];
    const exporter = new SpanExporter({ settings: settings(`${receiver.url}/v1/traces`, { protocol, headers: { 'x-api-key': 'k1' } }), source: SOURCE, log: (l) => lines.push(l) });
    const sent = Array.from({ length: 120 }, (_, i) => span(i));
    for (const s of sent) exporter.add(s);
    const stats = await exporter.finish();
    assert.deepEqual(
      receiver.spans.map((s) => s.traceId),
      sent.map((s) => s.traceId),
    );
    assert.equal(receiver.spans[0]?.service, 'roundload');
    assert.ok(receiver.requests.length >= 3, `batches of at most 50: ${receiver.requests.length} requests`);
    for (const r of receiver.requests) {
      assert.equal(r.contentType, protocol === 'http/json' ? 'application/json' : 'application/x-protobuf');
      assert.equal(r.headers['x-api-key'], 'k1');
    }
    assert.equal(stats.exported, 120);
    assert.equal(stats.dropped, 0);
    assert.match(lines.at(-1) ?? '', /120 of 120 spans exported/);
    assert.ok(!lines.join('\n').includes('k1'), 'the header value is never logged');
  });
}

test('a dead collector (connection refused) costs the spans, counted and said once; add never throws or waits', async () => {
  const port = await freePort();
  const lines: string[] = [];
  const exporter = new SpanExporter({ settings: settings(`http://127.0.0.1:${port}/v1/traces`), source: SOURCE, log: (l) => lines.push(l) });
  for (let i = 0; i < 200; i += 1) exporter.add(span(i));
  const stats = await exporter.finish();
  assert.equal(stats.exported, 0);
  assert.equal(stats.dropped, 200);
  assert.ok(stats.failed_requests >= 1);
  assert.equal(lines.filter((l) => l.includes('failed:')).length, 1, lines.join('\n'));
  assert.match(lines.at(-1) ?? '', /0 of 200 spans exported.*200 dropped/);
});

test('a slow collector (never answers): the queue stays bounded, and the end gives up within flush_timeout_s', async (t) => {
  const receiver = await otlpReceiver(t, { answer: 'never' });
  const delay = new LoopDelay();
  t.after(() => delay.stop());
  const exporter = new SpanExporter({ settings: settings(receiver.url, { maxQueueSpans: 100, maxBatchSpans: 10, timeoutMs: 60_000, flushTimeoutMs: 300 }), source: SOURCE, log: () => {} });
  for (let i = 0; i < 500; i += 1) exporter.add(span(i));
  const started = performance.now();
  const stats = await exporter.finish();
  const tookMs = performance.now() - started;
  assert.equal(stats.spans, 500);
  assert.equal(stats.exported, 0);
  assert.equal(stats.dropped, 500, 'the 400 the queue had no room for, and the 100 it held');
  // Bounded by the flush timeout (300 ms), whatever the request's own timeout (60 s); the margin is the loop's.
  assert.ok(tookMs < 300 + 1000 + delay.marginMs(), `finish took ${Math.round(tookMs)} ms`);
  assert.match(stats.last_error ?? '', /given up at the end of the run/);
});

test('a receiver that refuses (HTTP 400) costs those spans, counted with the status', async (t) => {
  const receiver = await otlpReceiver(t, { answer: 400 });
  const exporter = new SpanExporter({ settings: settings(receiver.url), source: SOURCE, log: () => {} });
  for (let i = 0; i < 5; i += 1) exporter.add(span(i));
  const stats = await exporter.finish();
  assert.equal(stats.dropped, 5);
  assert.match(stats.last_error ?? '', /HTTP 400/);
});
