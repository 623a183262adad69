// Who answered the failed requests (issue 33's fault matrix: both were `unknown`): the engine's own JSON 500
// while it answered canaries and scrapes and work flowed — alive, and yet the culprit; nginx's own 413 page
// for a body past client_max_body_size — the proxy refused the request itself, the engine never saw it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diagnose, type DiagnosisInput, type ErrorSpan } from '../../src/analysis/index.js';
import type { Diagnosis, PathKind } from '../../src/types/index.js';
import { activity, canaries, client, error, flow, scrapes, steadyRequests } from './diagnosis-fixtures.js';

const RUN_MS = 20_000;
const text = (d: Diagnosis): string => d.evidence.join('\n');

/** Every agent request from 5 s to 15 s answered at once with `status`, by the server's JSON or a page. */
function answered(status: number, by: 'server_json' | 'page', detail: string): ErrorSpan[] {
  const out: ErrorSpan[] = [];
  for (let ms = 5000; ms < 15_000; ms += 100) out.push(error(ms, `http_${String(status)[0]}xx`, { http_status: status, answered_by: by, detail, headers_ms: 3, last_byte_ms: 3 }));
  return out;
}

/** The engine healthy in every other way: canaries on both legs fine, scrapes answered, work flowing. */
function healthyAround(errors: ErrorSpan[], path: PathKind = 'proxy'): DiagnosisInput {
  return {
    path,
    hangs: [],
    errors,
    canaries: path === 'direct' ? [] : [...canaries('direct', RUN_MS, 250, () => 'ok'), ...canaries('proxied', RUN_MS, 250, () => 'ok')],
    scrapes: scrapes('engine', RUN_MS, 250, []),
    flows: [flow('engine', RUN_MS, 250, [])],
    gauges: [],
    client: client(RUN_MS),
    activity: activity(steadyRequests(RUN_MS, [])),
  };
}

test("the engine's own JSON 500 while it answered everything else is engine: alive, which does not clear it", () => {
  const d = diagnose(healthyAround(answered(500, 'server_json', 'engine fault: HTTP 500 (type InternalServerError, code 500)')));
  assert.equal(d.verdict, 'engine', text(d));
  const e = d.episodes![0]!;
  assert.match(e.evidence_for.join('\n'), /the server answered 100 requests with its own 5xx error body/);
  assert.match(e.evidence_against.join('\n'), /alive, which does not clear it: it answered the failed requests with its own error/);
  assert.ok((e.scores.engine ?? 0) > 0, JSON.stringify(e.scores));
});

test("nginx's own 413 page on the agents' path is proxy: it refused the request itself, naming the body limit", () => {
  const d = diagnose(healthyAround(answered(413, 'page', '413 Request Entity Too Large nginx/1.22.1')));
  assert.equal(d.verdict, 'proxy', text(d));
  const e = d.episodes![0]!;
  assert.match(e.evidence_for.join('\n'), /the proxy refused 100 requests itself with an error page \(HTTP 413\).*client_max_body_size/);
  assert.ok((e.scores.engine ?? 0) < 0, JSON.stringify(e.scores));
});

test('the same 413 page straight to the engine is the engine refusing it (no proxy to blame)', () => {
  const d = diagnose(healthyAround(answered(413, 'page', '413 Request Entity Too Large'), 'direct'));
  assert.match(text(d), /the server refused 100 requests with an error page \(HTTP 413\)/);
  assert.notEqual(d.verdict, 'proxy');
});

test('a 413 answered with a JSON body (the engine rejecting a prompt too long) is no proxy refusal', () => {
  const d = diagnose(healthyAround(answered(413, 'server_json', '{"error":{"message":"prompt too long"}}')));
  assert.doesNotMatch(text(d), /the proxy refused/);
  assert.notEqual(d.verdict, 'proxy', text(d));
});
