import { test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { UsageError } from '../../src/errors.js';
import { Upstream } from '../../src/hop/upstream.js';

const noTls = { ca: null, insecure: false, servername: null };

test('an upstream that is not an http:// or https:// URL is a usage error naming it', () => {
  assert.throws(
    () => new Upstream('localhost:30000', noTls, 1),
    (e: unknown) => e instanceof UsageError && e.message === 'hop upstream must be http:// or https://, got localhost:30000',
  );
  assert.throws(
    () => new Upstream('not a url', noTls, 1),
    (e: unknown) => e instanceof UsageError && e.message === 'hop upstream "not a url" is not a URL',
  );
  assert.throws(() => new Upstream('ftp://127.0.0.1/', noTls, 1), UsageError);
});

test('upstream connections are kept alive and the most recently used is reused first, at most the pool size of them', () => {
  const upstream = new Upstream('http://127.0.0.1:30000/v1/', noTls, 7);
  assert.equal(upstream.pool instanceof https.Agent, false);
  assert.equal(upstream.pool.maxSockets, 7);
  assert.equal(upstream.agent(1).maxSockets, 1);
  const options = (upstream.pool as unknown as { options: Record<string, unknown> }).options;
  assert.equal(options.keepAlive, true);
  assert.equal(options.scheduling, 'lifo');
  upstream.pool.destroy();
});

test("an https upstream's certificate is checked against the CA and name given, and not at all when insecure", () => {
  const options = (u: Upstream): Record<string, unknown> => (u.pool as unknown as { options: Record<string, unknown> }).options;
  const verified = new Upstream('https://engine.internal:8443', { ca: 'PEM', insecure: false, servername: 'engine' }, 2);
  assert.ok(verified.pool instanceof https.Agent);
  assert.equal(options(verified).rejectUnauthorized, true);
  assert.equal(options(verified).ca, 'PEM');
  assert.equal(options(verified).servername, 'engine');
  const insecure = new Upstream('https://engine.internal:8443', { ca: null, insecure: true, servername: null }, 2);
  assert.equal(options(insecure).rejectUnauthorized, false);
  assert.equal('ca' in options(insecure), false, "Node's roots only");
  assert.equal('servername' in options(insecure), false);
  verified.pool.destroy();
  insecure.pool.destroy();
});
