import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SseCutter } from '../../src/hop/sse-cut.js';

const BODY = 'data: {"a":1}\n\n' + ': engine-first-token-ms=12\n\n' + 'data: {"b":2}\r\n\r\n' + 'event: x\ndata: {"c":3}\n\n' + 'data: [DONE]\n\n';

function cutAt(limit: number, splits: number[]): string {
  const bytes = Buffer.from(BODY);
  const cutter = new SseCutter(limit);
  const out: Buffer[] = [];
  let from = 0;
  for (const to of [...splits, bytes.length]) {
    out.push(Buffer.from(cutter.take(bytes.subarray(from, to))));
    from = to;
  }
  return Buffer.concat(out).toString();
}

test('the cut lets through exactly K events, comments not counted, wherever the chunks split', () => {
  const expected = [
    '',
    'data: {"a":1}\n\n',
    'data: {"a":1}\n\n: engine-first-token-ms=12\n\ndata: {"b":2}\r\n\r\n',
    'data: {"a":1}\n\n: engine-first-token-ms=12\n\ndata: {"b":2}\r\n\r\nevent: x\ndata: {"c":3}\n\n',
    BODY,
    BODY,
  ];
  const length = Buffer.byteLength(BODY);
  for (let k = 0; k < expected.length; k += 1) {
    assert.equal(cutAt(k, []), expected[k], `k=${k} in one chunk`);
    for (let at = 0; at <= length; at += 1) assert.equal(cutAt(k, [at]), expected[k], `k=${k} split at ${at}`);
    for (let at = 1; at < length; at += 7) assert.equal(cutAt(k, [at, Math.min(length, at + 3)]), expected[k], `k=${k} split at ${at} and ${at + 3}`);
  }
});

test('a cutter reports done once the K-th event has passed, and takes nothing after', () => {
  const cutter = new SseCutter(1);
  assert.equal(cutter.done, false);
  assert.equal(Buffer.from(cutter.take(Buffer.from('data: 1\n'))).toString(), 'data: 1\n');
  assert.equal(cutter.done, false);
  assert.equal(Buffer.from(cutter.take(Buffer.from('\ndata: 2\n\n'))).toString(), '\n');
  assert.equal(cutter.done, true);
  assert.equal(cutter.events, 1);
  assert.equal(cutter.take(Buffer.from('data: 3\n\n')).length, 0);
});
