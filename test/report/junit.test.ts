import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SummaryBuilder, type Summary } from '../../src/analysis/index.js';
import { junitCases, renderJunit, xmlEscape } from '../../src/report/index.js';
import { hangRecord, record } from './fixtures.js';

const run = {
  name: 'nightly',
  status: 'completed',
  started_at: '2026-01-01T00:00:00.000Z',
  ended_at: '2026-01-01T00:01:00.000Z',
  wall_s: 60,
  target: 'http://127.0.0.1:1',
  path: 'direct',
  labels: { arm: 'b' },
};

function summary(records = [record()], over: Partial<Summary['run']> = {}, thresholds?: ConstructorParameters<typeof SummaryBuilder>[0]['thresholds']): Summary {
  const b = new SummaryBuilder({ itlFromRecords: true, ...(thresholds === undefined ? {} : { thresholds }) });
  for (const r of records) b.add(r);
  return b.build({ ...run, ...over });
}

/** Every `&` starts an entity, no `<` inside attribute values or text, tags balance: enough for our output. */
function assertWellFormed(xml: string): void {
  assert.ok(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n'));
  assert.doesNotMatch(xml, /&(?!(amp|lt|gt|quot|apos);)/, 'bare &');
  const stack: string[] = [];
  const body = xml.replace(/^<\?xml[^>]*\?>/, '');
  for (const m of body.matchAll(/<(\/?)([a-z]+)((?:\s+[a-z]+="[^"<]*")*)\s*(\/?)>|</g)) {
    assert.ok(m[2] !== undefined, `stray < at ${m.index}: ${body.slice(m.index, m.index + 40)}`);
    if (m[1] === '/') assert.equal(stack.pop(), m[2]);
    else if (m[4] !== '/') stack.push(m[2]);
  }
  assert.deepEqual(stack, []);
}

test('a clean run: "no hangs" and "run completed" pass, one case per threshold, counts in the suite', () => {
  const s = summary([record()], {}, { hangs: 0, error_rate: 0.5, ttft_p99_ms: 1000, itl_p99_ms: null, e2e_p99_ms: null, decode_tokens_per_s_min: null, per_window: false });
  const cases = junitCases(s);
  assert.deepEqual(
    cases.map((c) => [c.name, c.failure === null]),
    [
      ['no hangs', true],
      ['ok_requests (always on)', true],
      ['hangs', true],
      ['error_rate', true],
      ['ttft_p99_ms', true],
      ['run completed', true],
    ],
  );
  const xml = renderJunit(s);
  assertWellFormed(xml);
  assert.match(xml, /<testsuites name="roundload" tests="6" failures="0" errors="0" time="60\.000">/);
  assert.match(xml, /<testsuite name="roundload\.nightly" tests="6" failures="0" errors="0" skipped="0" time="60\.000" timestamp="2026-01-01T00:00:00">/);
  assert.match(xml, /<property name="label\.arm" value="b"\/>/);
  assert.match(xml, /<testcase classname="roundload\.nightly\.thresholds" name="ttft_p99_ms" time="0"\/>/);
  assert.doesNotMatch(xml, /<failure/);
});

test('hangs fail "no hangs" with the count and the phases; a failed threshold carries its message', () => {
  const s = summary(
    [record(), hangRecord({ round: 2 }), hangRecord({ round: 3 }), hangRecord({ round: 3, hang: { phase: 'first_token', deadline: 'first_token_ms', deadline_ms: 900, last_byte_age_ms: 900 } })],
    {},
    { hangs: 0, error_rate: null, ttft_p99_ms: 5, itl_p99_ms: null, e2e_p99_ms: null, decode_tokens_per_s_min: null, per_window: false },
  );
  const xml = renderJunit(s);
  assertWellFormed(xml);
  assert.match(xml, /tests="5" failures="3"/);
  assert.match(xml, /<testcase classname="roundload\.nightly" name="no hangs" time="0">\n {6}<failure type="hangs" message="3 requests hung \(mid_stream 2, first_token 1\)">3 requests hung/);
  assert.match(xml, /by round: round 2: 1, round 3: 2/);
  assert.match(xml, /by request number on the socket: nth 3: 3/);
  const ttft = s.thresholds.results.find((r) => r.name === 'ttft_p99_ms')!;
  assert.equal(ttft.ok, false);
  assert.ok(xml.includes(`<failure type="threshold" message="${xmlEscape(ttft.message)}">`));
});

test('a killed run fails "run completed"', () => {
  const xml = renderJunit(summary([record()], { status: 'killed' }));
  assertWellFormed(xml);
  assert.match(xml, /name="run completed" time="0">\n {6}<failure type="status" message="run status is killed">/);
});

test('names, labels and messages are escaped; characters XML cannot carry are dropped', () => {
  assert.equal(xmlEscape(`a<b>&"c'`), 'a&lt;b&gt;&amp;&quot;c&apos;');
  assert.equal(xmlEscape('x\u0000y\u001bz\tw\n'), 'xyz\tw\n');
  assert.equal(xmlEscape('emoji 🙂 ok'), 'emoji 🙂 ok');
  const xml = renderJunit(summary([hangRecord()], { name: 'we<ird>&"name\u0007', labels: { 'k"<': 'v&\u0001' } }));
  assertWellFormed(xml);
  assert.match(xml, /name="roundload\.we&lt;ird&gt;&amp;&quot;name"/);
  assert.match(xml, /<property name="label\.k&quot;&lt;" value="v&amp;"\/>/);
});

test('a run where no request ended ok fails the always-on case, its body quoting the first error of each class', () => {
  const failed = (status: number) =>
    record({
      status: 'error',
      http_status: status,
      ttft_ms: null,
      completion_tokens: null,
      error: { class: 'http_4xx', message: 'HTTP 401: Invalid API key (type authentication_error)', code: String(status), url_path: '/v1/chat/completions' },
    });
  const s = summary([failed(401), failed(401)], {}, { hangs: 0, error_rate: null, ttft_p99_ms: null, itl_p99_ms: null, e2e_p99_ms: null, decode_tokens_per_s_min: null, per_window: false });
  const xml = renderJunit(s);
  assertWellFormed(xml);
  assert.match(
    xml,
    /<testcase classname="roundload\.nightly\.thresholds" name="ok_requests \(always on\)" time="0">\n {6}<failure type="threshold" message="no request ended ok: of 2, 2 ended in error \(http_4xx 2\)/,
  );
  assert.match(xml, /first http_4xx \(×2\), HTTP 401 on \/v1\/chat\/completions: HTTP 401: Invalid API key \(type authentication_error\)/);
});

test('a path timeout found by the diagnosis is a property and the first line under the diagnosis', () => {
  const cut = [0, 1, 2].map((i) =>
    record({
      agent: i,
      run_ms: i * 700,
      path: 'proxy',
      status: 'error',
      http_status: 504,
      headers_ms: 2001,
      last_byte_ms: 2002,
      e2e_ms: 2002,
      ttft_ms: null,
      error: { class: 'http_5xx', message: 'HTTP 504: 504 Gateway Time-out', code: '504', body: 'page' },
    }),
  );
  const s = summary([...cut, hangRecord({ agent: 5, run_ms: 9000 })], { path: 'proxy' });
  const xml = renderJunit(s);
  assert.match(xml, /<property name="path_timeout_s" value="2\.001"\/>/);
  const hangs = junitCases(s).find((c) => c.name === 'no hangs');
  assert.match(
    hangs?.failure?.body ?? '',
    /diagnosis: \w+\ntimeout: the path cuts requests at 2\.0 s \(3 of 3 failures: 504 from the proxy at 2\.0 ± 0\.00 s after the send, before any response header\)/,
  );
});
