// The engine's request traces: a server's span parented on the incoming traceparent, its stages one after
// another as its children, and a request still in a stage when the engine stops handed over with that stage
// open (cut at the stop, ERROR, marked) so the hung request's trace shows where it stopped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineTraces } from '../../src/engine/tracing.js';

const PARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

test("a finished request: the server's span under the caller's, each stage under it, in order, none ERROR", () => {
  const traces = new EngineTraces();
  const t = traces.start('decode', PARENT, { 'sglang.rid': 'rl-x' }, 1000);
  t.stage('decode_waiting', 1000);
  t.stage('decode_forward', 1200);
  t.end(null, 1500);
  const [root, queue, decode, ...rest] = traces.take();
  assert.deepEqual(rest, []);
  assert.ok(root && queue && decode);
  assert.equal(root.traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
  assert.equal(root.parentSpanId, '00f067aa0ba902b7');
  assert.equal(root.name, 'decode request');
  assert.deepEqual([root.startMs, root.endMs, root.error], [1000, 1500, null]);
  assert.deepEqual([queue.name, queue.parentSpanId, queue.startMs, queue.endMs], ['decode_waiting', root.spanId, 1000, 1200]);
  assert.deepEqual([decode.name, decode.startMs, decode.endMs], ['decode_forward', 1200, 1500]);
  assert.equal(t.traceparent, `00-${root.traceId}-${root.spanId}-01`);
  assert.deepEqual(traces.take(), [], 'taken once');
});

test('a request stuck in a stage stays open until the engine stops, then comes out ERROR with that stage open', () => {
  const traces = new EngineTraces();
  const stuck = traces.start('prefill', PARENT, {});
  stuck.stage('prefill_bootstrap');
  stuck.stage('prefill_transfer_kv_cache');
  assert.deepEqual(traces.take(), [], 'nothing finished yet');
  const spans = traces.close();
  const root = spans.find((s) => !s.stage)!;
  const transfer = spans.find((s) => s.name === 'prefill_transfer_kv_cache')!;
  assert.equal(root.error, 'still open when the engine stopped, in prefill_transfer_kv_cache');
  assert.equal(root.attributes['engine.request.open'], true);
  assert.equal(transfer.attributes['engine.stage.open'], true);
  assert.equal(transfer.error, root.error);
  assert.equal(spans.find((s) => s.name === 'prefill_bootstrap')?.error, null, 'the stage it left ended well');
});

test('a traceparent that is not W3C version 00 (or all zeros) starts a trace of its own', () => {
  const traces = new EngineTraces();
  for (const header of [undefined, 'garbage', '00-00000000000000000000000000000000-00f067aa0ba902b7-01', '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01']) {
    traces.start('router', header, {}).end();
    const [root] = traces.take();
    assert.equal(root?.parentSpanId, null, String(header));
    assert.match(root?.traceId ?? '', /^[0-9a-f]{32}$/);
  }
});
