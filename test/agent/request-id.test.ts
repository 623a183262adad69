// The request id's body field: put first in the JSON object (so extra_body's field of the same name wins),
// and ids unique per request.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nextPublicRequestId, withBodyId } from '../../src/agent/request-id.js';

test("the id goes in as the body object's first field, and a later field of the same name wins", () => {
  const body = withBodyId(Buffer.from(' {"model":"m","rid":"mine"}'), 'rid', 'rl-x-a0-c1-r1-1');
  assert.equal(body.toString(), '{"rid":"rl-x-a0-c1-r1-1","model":"m","rid":"mine"}');
  assert.equal((JSON.parse(body.toString()) as { rid: string }).rid, 'mine');
  assert.equal(withBodyId(Buffer.from('{}'), 'rid', 'a').toString(), '{"rid":"a"}');
  assert.equal(withBodyId(Buffer.from('[1]'), 'rid', 'a').toString(), '[1]');
});

test('each request of the same round gets its own readable id', () => {
  const a = nextPublicRequestId('a3-c2', 5);
  const b = nextPublicRequestId('a3-c2', 5);
  assert.match(a, /^rl-[0-9a-f]{6}-a3-c2-r5-\d+$/);
  assert.notEqual(a, b);
});
