// Runs against an https target (the built-in hop standing in for a TLS server): CA, servername, insecure.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeCertificates } from '../../src/hop/index.js';
import { tempDir } from '../helpers/tmp.js';
import { backend, classes, runTarget } from '../helpers/paths.js';

test('an https target with the wrong CA fails every request with class tls; with target.tls.ca it succeeds, verified', async (t) => {
  const { hop } = await backend(t);
  const other = await makeCertificates(tempDir(t));
  const wrong = await runTarget(t, `{url: "${hop.url}", tls: {ca: "${other.caFile}"}}`);
  assert.equal(wrong.length, 6);
  assert.deepEqual(new Set(classes(wrong)), new Set(['error:tls']), JSON.stringify(wrong[0]?.error));
  assert.ok(wrong.every((r) => r.path === 'direct' && r.http_status === null));
  // With the preflight, the run stops at its start instead, saying why.
  await assert.rejects(
    runTarget(t, `{url: "${hop.url}", tls: {ca: "${other.caFile}"}}`, { preflight: true }),
    (e: Error & { code?: string }) => e.code === 'ERR_PREFLIGHT' && /failed: .*\(tls\)/.test(e.message),
  );
  const none = await runTarget(t, `{url: "${hop.url}"}`);
  assert.deepEqual(new Set(classes(none)), new Set(['error:tls']), "Node's roots alone do not trust the hop");
  const right = await runTarget(t, `{url: "${hop.url}", tls: {ca: "${hop.caFile}"}}`);
  assert.deepEqual(new Set(classes(right)), new Set(['ok']));
  assert.ok(right.every((r) => r.connection?.tls?.authorized === true && r.connection.tls.protocol?.startsWith('TLS')));
  assert.deepEqual(
    right.filter((r) => r.agent === 0).map((r) => r.connection?.nth),
    [1, 2, 3],
    'one TLS socket per agent, reused',
  );
});

test('target.tls.servername is the name verified; tls.insecure skips verification and the record says so', async (t) => {
  const { hop } = await backend(t);
  const named = await runTarget(t, `{url: "${hop.url}", tls: {ca: "${hop.caFile}", servername: localhost}}`);
  assert.deepEqual(new Set(classes(named)), new Set(['ok']));
  const mismatch = await runTarget(t, `{url: "${hop.url}", tls: {ca: "${hop.caFile}", servername: example.com}}`);
  assert.deepEqual(new Set(classes(mismatch)), new Set(['error:tls']), JSON.stringify(mismatch[0]?.error));
  const insecure = await runTarget(t, `{url: "${hop.url}", tls: {insecure: true}}`);
  assert.deepEqual(new Set(classes(insecure)), new Set(['ok']));
  assert.ok(
    insecure.every((r) => r.connection?.tls?.authorized === false),
    'unverified, and recorded as such',
  );
});

test('the built-in hop in front of an https target verifies it with target.tls: ok with its CA, a 502 without', async (t) => {
  const { hop: inner } = await backend(t);
  const trusted = await runTarget(t, `{url: "${inner.url}", tls: {ca: "${inner.caFile}"}, via: {kind: hop}}`);
  assert.deepEqual(new Set(classes(trusted)), new Set(['ok']));
  assert.ok(trusted.every((r) => r.path === 'hop' && r.connection?.tls?.authorized === true));
  const untrusted = await runTarget(t, `{url: "${inner.url}", via: {kind: hop}}`);
  assert.deepEqual(new Set(classes(untrusted)), new Set(['error:http_5xx']));
  assert.match(untrusted[0]!.error!.message, /HTTP 502.*roundload hop: upstream/);
  await assert.rejects(
    runTarget(t, `{url: "${inner.url}", via: {kind: hop}}`, { preflight: true }),
    (e: Error & { code?: string }) => e.code === 'ERR_PREFLIGHT' && /HTTP 502/.test(e.message) && /nothing behind it served the request/.test(e.message),
  );
});
