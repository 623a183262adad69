import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SecretScrubber, redactUrlCredentials, urlSecrets } from '../../src/util/index.js';
import { parseWorkload, redactWorkload, workloadSecrets } from '../../src/config/index.js';

test('URL credentials are redacted wherever a URL appears; the user stays, a lone user (a token) goes', () => {
  assert.equal(redactUrlCredentials('target https://alice:s3cret@router:8443/v1 is down'), 'target https://alice:***@router:8443/v1 is down');
  assert.equal(redactUrlCredentials('"http://ghp_tok3n@h/x"'), '"http://***@h/x"');
  // A raw @ inside the password is part of it: the userinfo runs to the last @ before the host.
  assert.equal(redactUrlCredentials('http://u:p@ss@host/path'), 'http://u:***@host/path');
  // Not credentials: an @ in a path or a query, a mail address, a URL without userinfo.
  for (const text of ['http://host/a@b', 'http://host/?to=a@b', 'mail a@b.c', 'https://host:1/x', 'CONNECT host:443']) assert.equal(redactUrlCredentials(text), text);
  assert.equal(redactUrlCredentials('two: http://a:b1@h1 and ws://c:d2@h2'), 'two: http://a:***@h1 and ws://c:***@h2');
});

test('a secret is masked in every form it is written in: as is, JSON-escaped, percent-encoded, HTML- and XML-escaped', () => {
  const secret = 'k3y"<&>\'/x';
  const s = new SecretScrubber([secret]);
  assert.equal(s.text(`Bearer ${secret}!`), 'Bearer ***!');
  const line = JSON.stringify({ message: `got ${secret}` });
  const scrubbed = s.text(line);
  assert.deepEqual(JSON.parse(scrubbed), { message: 'got ***' }, 'a JSON line stays valid JSON');
  assert.equal(s.text(`q=${encodeURIComponent(secret)}`), 'q=***');
  assert.equal(s.text('k3y&quot;&lt;&amp;&gt;&#39;/x'), '***');
  assert.equal(s.text('k3y&quot;&lt;&amp;&gt;&apos;/x'), '***');
  assert.equal(s.text(JSON.stringify(secret).slice(1, -1).replace(/</g, '\\u003c')), '***');
});

test('secrets are masked longest first, short ones never (they would mask ordinary words), and values deep-copied', () => {
  const s = new SecretScrubber(['abcd', 'abcdefgh', 'ok', '']);
  assert.equal(s.size, 2);
  assert.equal(s.text('abcdefgh abcd ok'), '*** *** ok');
  const input = { a: ['x abcd'], 'key-abcd': { b: 'http://u:pw12@h' }, n: 1, z: null };
  assert.deepEqual(s.value(input), { a: ['x ***'], 'key-***': { b: 'http://u:***@h' }, n: 1, z: null });
  assert.deepEqual(input.a, ['x abcd'], 'the input is untouched');
});

test("a URL's secrets: the password as written and decoded, and the Basic token made of it", () => {
  assert.deepEqual(urlSecrets('http://me:p%40ss@h'), ['p%40ss', 'p@ss', Buffer.from('me:p@ss').toString('base64')]);
  assert.deepEqual(urlSecrets('http://tok3n@h'), ['tok3n', 'tok3n']);
  assert.deepEqual(urlSecrets('http://h'), []);
  assert.deepEqual(urlSecrets('not a url'), []);
});

test("a workload's secrets are the API key's value and every URL credential in it; run.json's copy redacts the URLs", () => {
  const w = parseWorkload(
    'target: {url: "http://t:tpass1@h:1", api_key_env: MY_KEY, via: {kind: connect, url: "http://p:ppass1@proxy:3128"}, bypass: "http://b:bpass1@h:2"}\nmonitor: {targets: [{name: m, url: "http://m:mpass1@h:3/metrics"}]}\n',
    'w.yaml',
  );
  const secrets = workloadSecrets(w, { MY_KEY: 'the-key-value' });
  for (const value of ['the-key-value', 'tpass1', 'ppass1', 'bpass1', 'mpass1']) assert.ok(secrets.includes(value), value);
  const redacted = JSON.stringify(redactWorkload(w));
  for (const value of ['tpass1', 'ppass1', 'bpass1', 'mpass1']) assert.ok(!redacted.includes(value), value);
  assert.match(redacted, /"url":"http:\/\/t:\*\*\*@h:1"/);
  assert.match(redacted, /"api_key_env":"MY_KEY"/);
});
