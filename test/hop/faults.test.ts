import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseFaultSpec, formatFault, makeCertificates } from '../../src/hop/index.js';
import { seededUnit } from '../../src/hop/faults.js';
import { UsageError } from '../../src/errors.js';
import { tempDir } from '../helpers/tmp.js';

test('a --fault spec parses into the workload form with its defaults, - and _ alike', () => {
  assert.deepEqual(parseFaultSpec('stall:after_requests=3'), { kind: 'stall', after_requests: 3 });
  assert.deepEqual(parseFaultSpec('stall'), { kind: 'stall', after_requests: 1 });
  assert.deepEqual(parseFaultSpec('cut:after-chunks=0'), { kind: 'cut', after_chunks: 0 });
  assert.deepEqual(parseFaultSpec('buffer'), { kind: 'buffer' });
  assert.deepEqual(parseFaultSpec('idle-close:after_s=2.5,mode=rst'), { kind: 'idle_close', after_s: 2.5, mode: 'rst' });
  assert.deepEqual(parseFaultSpec('reset:ratio=0.25'), { kind: 'reset', ratio: 0.25, seed: 1 });
  assert.deepEqual(parseFaultSpec('latency:ms=200,jitter_ms=50'), { kind: 'latency', ms: 200, jitter_ms: 50 });
  assert.equal(formatFault(parseFaultSpec('idle_close:after_s=2')), 'idle_close:after_s=2,mode=silent');
});

test('a bad --fault spec is a usage error that says what is wrong', () => {
  assert.throws(
    () => parseFaultSpec('stal'),
    (e: unknown) => e instanceof UsageError && /must be one of stall, cut/.test(e.message),
  );
  assert.throws(
    () => parseFaultSpec('stall:after=3'),
    (e: unknown) => e instanceof UsageError && /unknown key after/.test(e.message),
  );
  assert.throws(
    () => parseFaultSpec('reset:ratio=2'),
    (e: unknown) => e instanceof UsageError && /ratio/.test(e.message),
  );
  assert.throws(
    () => parseFaultSpec('idle_close:mode=fin'),
    (e: unknown) => e instanceof UsageError && /mode/.test(e.message),
  );
  assert.throws(
    () => parseFaultSpec('latency:ms'),
    (e: unknown) => e instanceof UsageError && /key=value/.test(e.message),
  );
});

test('the seeded choice is the same run after run, differs by seed, and is spread over [0, 1)', () => {
  const a = Array.from({ length: 1000 }, (_, i) => seededUnit(1, i));
  assert.deepEqual(
    a,
    Array.from({ length: 1000 }, (_, i) => seededUnit(1, i)),
  );
  assert.notDeepEqual(
    a.slice(0, 20),
    Array.from({ length: 20 }, (_, i) => seededUnit(2, i)),
  );
  assert.ok(a.every((x) => x >= 0 && x < 1));
  const below = a.filter((x) => x < 0.3).length;
  assert.ok(below > 240 && below < 360, `about 30% below 0.3, got ${below}`);
});

test('the hop certificate is signed by its CA for 127.0.0.1, localhost and ::1, and a CA already in the folder is reused', async (t) => {
  const dir = tempDir(t);
  const first = await makeCertificates(dir);
  const ca = new X509Certificate(readFileSync(first.caFile));
  const leaf = new X509Certificate(first.cert);
  assert.ok(ca.ca, 'the CA is a CA');
  assert.equal(leaf.ca, false);
  assert.ok(leaf.checkIssued(ca) && leaf.verify(ca.publicKey), 'the server certificate is signed by the CA');
  assert.match(leaf.subjectAltName ?? '', /DNS:localhost/);
  assert.match(leaf.subjectAltName ?? '', /IP Address:127\.0\.0\.1/);
  assert.match(leaf.subjectAltName ?? '', /IP Address:(0:0:0:0:0:0:0:1|::1)/i);
  assert.equal(leaf.publicKey.asymmetricKeyType, 'ec');
  assert.ok(new Date(leaf.validFrom).getTime() < Date.now());
  const second = await makeCertificates(dir);
  assert.equal(readFileSync(second.caFile, 'utf8'), readFileSync(join(dir, 'ca.pem'), 'utf8'));
  assert.equal(second.ca, first.ca, 'the same CA');
  assert.notEqual(second.cert, first.cert, 'a fresh server certificate');
});
