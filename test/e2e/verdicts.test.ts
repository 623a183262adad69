// Verdicts a CI job acts on, from the command line as a user runs it: a broken run never exits 0, and the
// cause is on the terminal. Every HTTP 500, a dead engine (a separate process killed after the start), a
// wrong API key, a base URL already ending in /v1, a proxy that is down; a healthy run still exits 0.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { engineSchema } from '../../src/config/index.js';
import { startEngine } from '../../src/engine/index.js';
import type { Summary } from '../../src/analysis/index.js';
import type { RequestRecord } from '../../src/types/index.js';
import { fakeChat, okAnswer, sse } from '../helpers/fake-chat.js';
import { engineProcess, readJsonl, runCli, tempDir } from '../helpers/tmp.js';

const SHORT = ['--rounds', '3', '--set', 'agents.think_time_ms=0'];
/** A whole CLI run on a busy CI machine: generous, since these tests assert outcomes, never durations. */
const SLOW = 120_000;

// Each case is its own CLI process (and server): they run side by side to keep the file's wall time down.
describe('verdicts of broken runs', { concurrency: 2 }, () => {
  it('every request HTTP 500: exit 1, the always-on check and error_rate fail, the first error is on the terminal', async (t) => {
    const out = join(tempDir(t), 'r');
    const res = await runCli(['run', 'workloads/smoke.yaml', ...SHORT, '--set', 'engine.faults=[{kind: http_error, status: 500}]', '--out', out], { timeoutMs: SLOW });
    assert.equal(res.code, 1, res.stderr);
    assert.match(res.stdout, /^errors {5}http_5xx 12$/m);
    assert.match(res.stdout, /· http_5xx ×12, first at [\d.]+ s, a\d-c1 round 1, HTTP 500, \/v1\/chat\/completions: HTTP 500: engine fault/);
    assert.match(res.stdout, /^thresholds FAILED 2 of 3: ok_requests \(always on, whatever the thresholds\): no request ended ok: of 12, 12 ended in error \(http_5xx 12\)/m);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Summary;
    assert.deepEqual(
      summary.thresholds.results.map((r) => [r.name, r.ok]),
      [
        ['ok_requests', false],
        ['hangs', true],
        ['error_rate', false],
      ],
    );
    assert.equal(summary.first_errors?.[0]?.http_status, 500);
    const junit = readFileSync(join(out, 'junit.xml'), 'utf8');
    assert.match(junit, /name="ok_requests \(always on\)" time="0">\n {6}<failure/);
    assert.match(readFileSync(join(out, 'report.html'), 'utf8'), /<b>no request ended ok<\/b>/);
  });

  it('every answer `choices: []` chunks only: exit 1, the FAIL banner names the error rate with the empty answers; they stay ok answers warned empty_answer', async (t) => {
    const nothing = `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [] })}\n\n`;
    const server = await fakeChat(t, (_r, res) => sse(res, `${nothing.repeat(3)}data: [DONE]\n\n`), { models: ['deepseek-v4-flash'] });
    const out = join(tempDir(t), 'r');
    const res = await runCli(['run', 'workloads/smoke.yaml', ...SHORT, '--target', server.url, '--out', out], { timeoutMs: SLOW });
    assert.equal(res.code, 1, res.stderr + res.stdout);
    const banner = /^FAIL \(exit 1\): errors on 100\.00% of requests \(12 of 12, 12 of them empty answers with no content, reasoning or tool call; hangs are checked by `hangs`\) > limit 1\.00%/m;
    assert.match(res.stdout, banner);
    assert.match(res.stdout, /^thresholds FAILED 1 of 3: error_rate: errors on 100\.00%/m);
    assert.match(res.stdout, /^warning {4}empty_answer on 12 ok answers/m);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Summary;
    assert.deepEqual([summary.totals.ok, summary.totals.errors], [12, 0], 'an empty answer is still an ok answer, not an error record');
    assert.equal(summary.warnings?.find((w) => w.class === 'empty_answer')?.count, 12);
    assert.deepEqual(
      summary.thresholds.results.map((r) => [r.name, r.ok]),
      [
        ['ok_requests', true],
        ['hangs', true],
        ['error_rate', false],
      ],
    );
  });

  it('a healthy run against a separate engine passes the preflight and exits 0', async (t) => {
    const engine = await engineProcess(t);
    const out = join(tempDir(t), 'r');
    const res = await runCli(['run', 'workloads/smoke.yaml', ...SHORT, '--target', engine.url, '--out', out], { timeoutMs: SLOW });
    assert.equal(res.code, 0, res.stderr + res.stdout);
    assert.match(res.stderr, /^preflight: POST http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions → HTTP 200, first token in \d+ ms, done in \d+ ms; model "deepseek-v4-flash" is served$/m);
    assert.match(res.stdout, /^thresholds 3 passed \(ok_requests, hangs, error_rate\)$/m);
    // The preflight's own request is an event, not a request record: the workload's 12 requests are all there is.
    assert.equal(readJsonl(join(out, 'requests.jsonl')).length, 12);
    const preflight = readJsonl<{ kind: string; ok: boolean; models: string[] }>(join(out, 'events.jsonl')).filter((e) => e.kind === 'preflight');
    assert.deepEqual(
      preflight.map((e) => [e.ok, e.models]),
      [[true, ['deepseek-v4-flash']]],
    );
  });

  it('an engine that dies after the start (a killed process): exit 1, connection_refused on the terminal', async (t) => {
    const engine = await engineProcess(t);
    const out = join(tempDir(t), 'r');
    const res = await runCli(['run', 'workloads/smoke.yaml', ...SHORT, '--target', engine.url, '--out', out], {
      timeoutMs: SLOW,
      onStderrLine: (line) => {
        if (line.startsWith('preflight:')) void engine.kill();
      },
    });
    assert.equal(res.code, 1, res.stderr + res.stdout);
    assert.match(res.stdout, /connection_refused ×\d+, first at [\d.]+ s, a\d-c1 round \d, \/v1\/chat\/completions: connect ECONNREFUSED/);
    assert.match(res.stdout, /^thresholds FAILED/m);
  });

  it("a wrong API key (401): the preflight stops the run with exit 3, the status and the server's message; without it, exit 1", async (t) => {
    const server = await fakeChat(t, (r, res) => {
      if (r.headers.authorization !== 'Bearer right-key') {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"Invalid API key provided","type":"authentication_error","code":"invalid_api_key"}}');
        return;
      }
      okAnswer(res);
    });
    const out = join(tempDir(t), 'r');
    const env = { RL_TEST_KEY: 'wrong-key' };
    const res = await runCli(['run', 'workloads/smoke.yaml', ...SHORT, '--target', server.url, '--set', 'target.api_key_env=RL_TEST_KEY', '--out', out], { env, timeoutMs: SLOW });
    assert.equal(res.code, 3, res.stderr);
    assert.match(
      res.stderr,
      /preflight failed: the preflight request POST http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions failed: HTTP 401: Invalid API key provided \(type authentication_error, code invalid_api_key\)/,
    );
    assert.match(res.stderr, /the key in \$RL_TEST_KEY was refused/);
    assert.doesNotMatch(res.stderr, /\n\s+at /, 'no stack trace');
    assert.equal(server.requests.filter((r) => r.method === 'POST').length, 1, 'one preflight request, no agent started');

    const skipped = await runCli(['run', 'workloads/smoke.yaml', ...SHORT, '--target', server.url, '--set', 'target.api_key_env=RL_TEST_KEY', '--no-preflight', '--out', join(tempDir(t), 's')], {
      env,
      timeoutMs: SLOW,
    });
    assert.equal(skipped.code, 1, skipped.stderr);
    assert.match(skipped.stdout, /· http_4xx ×12, first at [\d.]+ s, a\d-c1 round 1, HTTP 401, \/v1\/chat\/completions: HTTP 401: Invalid API key provided/);
    assert.doesNotMatch(skipped.stderr, /preflight/);
  });

  it('--target ending in /v1 (404 on /v1/v1/chat/completions): exit 3, suggesting the base URL without /v1', async (t) => {
    const engine = await startEngine({ settings: engineSchema.parse({}) });
    t.after(() => engine.close());
    const res = await runCli(['run', 'workloads/smoke.yaml', ...SHORT, '--target', `${engine.url}/v1`, '--out', join(tempDir(t), 'r')], { timeoutMs: SLOW });
    assert.equal(res.code, 3, res.stderr);
    assert.match(res.stderr, /POST http:\/\/127\.0\.0\.1:\d+\/v1\/v1\/chat\/completions failed: HTTP 404/);
    assert.ok(res.stderr.includes(`the path has /v1 twice: the base URL already ends in /v1; give it without (--target ${engine.url})`), res.stderr);
  });

  it('a CONNECT proxy that is down: exit 3 at the preflight naming the proxy; without the preflight every request is proxy_unreachable', async (t) => {
    const dead = await fakeChat(t, () => {});
    await dead.close();
    const proxy = dead.url;
    const res = await runCli(['run', 'workloads/smoke.yaml', ...SHORT, '--via', proxy, '--out', join(tempDir(t), 'r')], { timeoutMs: SLOW });
    assert.equal(res.code, 3, res.stderr);
    assert.ok(res.stderr.includes(`preflight failed: the proxy ${proxy} is unreachable`), res.stderr);
    assert.doesNotMatch(res.stderr, /target .* is unreachable/);

    const out = join(tempDir(t), 's');
    const skipped = await runCli(['run', 'workloads/smoke.yaml', '--rounds', '2', '--agents', '1', '--via', proxy, '--no-preflight', '--out', out], { timeoutMs: SLOW });
    assert.equal(skipped.code, 1, skipped.stderr);
    const records = readJsonl<RequestRecord>(join(out, 'requests.jsonl'));
    assert.deepEqual(
      records.map((r) => r.error?.class),
      ['proxy_unreachable', 'proxy_unreachable'],
    );
    assert.ok(records[0]!.error!.message.startsWith(`proxy ${proxy} unreachable (connection_refused)`), records[0]!.error!.message);
  });
});
