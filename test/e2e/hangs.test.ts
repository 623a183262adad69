// Whole runs against the embedded engine with one fault each: every fault ends in the record it must
// (status, error class, hang phase), the watchdog policies and the retry policy do what they say, and a run
// against an engine that hangs ends on time with exit 1.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun, type RunResult } from '../../src/run/index.js';
import type { HangEvent, RequestRecord, RunEvent } from '../../src/types/index.js';
import type { Summary } from '../../src/analysis/index.js';
import { readJsonl, runCli, tempDir } from '../helpers/tmp.js';
import type { TestContext } from 'node:test';
import { LoopDelay } from '../helpers/loop-delay.js';
import { cliArgs, ROOT } from '../helpers/root.js';

/** How late this process's event loop ran, over the whole file: upper time bounds widen by it (measured). */
const loop = new LoopDelay();
after(() => loop.stop());

type Json = Record<string, unknown>;

/** Small prompts, a fast engine, no think time and short deadlines: each run takes a second or two. stall_ms
 * stays well above any event-loop stall a loaded test machine makes (client and engine share the process). */
const BASE: Json = {
  agents: { count: 2, rounds: 3, think_time_ms: 0 },
  conversation: { system_prompt_tokens: 40, first_user_tokens: 20, user_turn_tokens: 10, tool_result_tokens: 20, tool_result_growth_tokens: 5, max_tokens: 24 },
  watchdog: { connect_ms: 2000, headers_ms: 1500, first_token_ms: 1500, stall_ms: 800, total_ms: 3000 },
  // No reasoning: a 24-token max_tokens would cut tool calls short after it (these tests are about the wire).
  engine: { decode_step_ms: 2, decode_step_ms_per_running: 0, prefill_ms_per_1k_tokens: 1, kv_transfer_ms: 0, output_tokens_min: 10, output_tokens_max: 14, reasoning: 'off' },
};

function merge(base: Json, over: Json): Json {
  const out: Json = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = typeof v === 'object' && v !== null && !Array.isArray(v) && typeof b === 'object' && b !== null && !Array.isArray(b) ? merge(b as Json, v as Json) : v;
  }
  return out;
}

interface Ran {
  result: RunResult;
  records: RequestRecord[];
  hangEvents: HangEvent[];
  wallMs: number;
}

/** Runs BASE with `over` merged in (JSON is YAML, so the text goes through the real loader). */
async function run(t: TestContext, over: Json, signal?: AbortSignal): Promise<Ran> {
  const out = join(tempDir(t), 'run');
  const workload = parseWorkload(JSON.stringify(merge(BASE, over)), 'test.yaml');
  const started = performance.now();
  const result = await executeRun({ workload, out, ...(signal === undefined ? {} : { signal }) });
  const wallMs = performance.now() - started;
  const records = readJsonl<RequestRecord>(join(out, 'requests.jsonl'));
  const hangEvents = readJsonl<HangEvent & { kind: string }>(join(out, 'events.jsonl')).filter((e) => e.kind === 'hang');
  return { result, records, hangEvents, wallMs };
}

const byAgentRound = (records: RequestRecord[]) => [...records].sort((a, b) => a.agent - b.agent || a.round - b.round || (a.attempt ?? 1) - (b.attempt ?? 1));
const show = (rs: RequestRecord[]) => JSON.stringify(rs.map((r) => ({ a: r.agent, r: r.round, s: r.status, c: r.error?.class, h: r.hang?.phase, nth: r.connection?.nth, att: r.attempt })));

test('hang after 2 requests on a connection: the 3rd on each socket is a first_token hang at nth 3, the agent goes on on a fresh socket', async (t) => {
  const { records, hangEvents, result } = await run(t, { agents: { rounds: 4 }, engine: { faults: [{ kind: 'hang', after_requests: 2 }] } });
  const rs = byAgentRound(records);
  assert.equal(rs.length, 8, show(rs));
  for (const agent of [0, 1]) {
    const mine = rs.filter((r) => r.agent === agent);
    assert.deepEqual(
      mine.map((r) => r.status),
      ['ok', 'ok', 'hang', 'ok'],
      show(mine),
    );
    const hung = mine[2]!;
    assert.equal(hung.hang?.phase, 'first_token');
    assert.equal(hung.hang?.deadline, 'first_token_ms');
    assert.equal(hung.http_status, 200, 'the headers came, as SGLang sends them at once');
    assert.equal(hung.connection?.nth, 3);
    assert.equal(hung.hang?.policy, 'abort');
    assert.equal(hung.hang?.outcome, 'aborted');
    assert.ok(hung.e2e_ms >= 1500 && hung.e2e_ms < 1500 + Math.max(1000, loop.marginMs()), `aborted at first_token_ms: ${hung.e2e_ms}`);
    assert.equal(mine[3]!.connection?.nth, 1, 'the aborted socket is gone; round 4 opens a fresh one');
  }
  assert.equal(hangEvents.length, 2, 'one hang event per hung request');
  const ev = hangEvents[0]!.record;
  assert.equal(ev.status, 'hang');
  assert.ok(ev.connection !== null && ev.connection.local_port !== null && ev.connection.age_ms > 0 && ev.connection.idle_ms !== null, JSON.stringify(ev.connection));
  assert.equal(ev.path, 'direct');
  assert.equal(result.summary.hangs.by_phase.first_token, 2);
  assert.deepEqual(result.summary.hangs.by_connection_reuse, { '3': 2 });
  assert.deepEqual(result.summary.hangs.by_round, { '3': 2 });
});

test('hang before headers is a headers hang with no HTTP status', async (t) => {
  const { records } = await run(t, { agents: { count: 1, rounds: 2 }, engine: { faults: [{ kind: 'hang_before_headers', from_round: 2 }] } });
  const rs = byAgentRound(records);
  assert.deepEqual(
    rs.map((r) => r.status),
    ['ok', 'hang'],
    show(rs),
  );
  assert.equal(rs[1]!.hang?.phase, 'headers');
  assert.equal(rs[1]!.http_status, null);
  assert.equal(rs[1]!.bytes, 0);
});

test('a stream stalled after 3 chunks is a mid-stream hang that says 3 chunks, their bytes and the last chunk age', async (t) => {
  const { records, hangEvents } = await run(t, { agents: { count: 1, rounds: 2 }, engine: { faults: [{ kind: 'stall_mid_stream', after_chunks: 3, from_round: 2 }] } });
  const rs = byAgentRound(records);
  assert.deepEqual(
    rs.map((r) => r.status),
    ['ok', 'hang'],
    show(rs),
  );
  const hung = rs[1]!;
  assert.equal(hung.hang?.phase, 'mid_stream');
  assert.equal(hung.hang?.deadline, 'stall_ms');
  assert.equal(hung.chunks, 3);
  assert.equal(hung.hang?.chunks, 3);
  assert.ok((hung.hang?.bytes ?? 0) > 0 && hung.hang?.bytes === hung.bytes);
  assert.ok((hung.hang?.last_chunk_age_ms ?? 0) >= 800, `last chunk age ${hung.hang?.last_chunk_age_ms}`);
  assert.ok(hung.hang.last_byte_age_ms >= 800);
  assert.ok(hung.ttft_ms !== null, 'the first token came before the stall');
  assert.equal(hangEvents[0]?.record.hang?.chunks, 3);
});

test('a drip (one byte every 150 ms, stall_ms 800) is slow but not a hang; a drip slower than stall_ms is', async (t) => {
  const slow = await run(t, { agents: { count: 1, rounds: 2 }, engine: { faults: [{ kind: 'drip', after_chunks: 2, interval_ms: 150, bytes: 4 }] } });
  assert.deepEqual(
    slow.records.map((r) => r.status),
    ['ok', 'ok'],
    show(slow.records),
  );
  assert.ok(
    slow.records.every((r) => r.e2e_ms >= 5 * 150),
    `each request waited out the drip: ${slow.records.map((r) => r.e2e_ms).join(',')}`,
  );
  assert.ok(
    slow.records.every((r) => (r.itl?.max_ms ?? 0) >= 5 * 150 - 50),
    'the drip shows as one long inter-token gap',
  );
  assert.equal(slow.result.summary.hangs.total, 0);
  const stuck = await run(t, { agents: { count: 1, rounds: 1 }, engine: { faults: [{ kind: 'drip', after_chunks: 2, interval_ms: 1500, bytes: 1 }] } });
  assert.equal(stuck.records[0]?.status, 'hang');
  assert.equal(stuck.records[0]?.hang?.phase, 'mid_stream');
});

test('a socket closed mid-stream is a connection_reset after the chunks that came; a clean end mid-stream is truncated_stream', async (t) => {
  const faults = [
    { kind: 'close_mid_stream', after_chunks: 2, from_round: 2, times: 1 },
    { kind: 'end_mid_stream', after_chunks: 3, from_round: 2, times: 1 },
  ];
  const { records } = await run(t, { agents: { count: 1, rounds: 4 }, engine: { faults } });
  const rs = byAgentRound(records);
  assert.deepEqual(
    rs.map((r) => r.error?.class ?? r.status),
    ['ok', 'connection_reset', 'truncated_stream', 'ok'],
    show(rs),
  );
  assert.equal(rs[1]!.chunks, 2);
  assert.equal(rs[1]!.connection?.nth, 2, 'a reused socket, but after headers: a reset, not the keep-alive race');
  assert.equal(rs[2]!.chunks, 3);
});

test('HTTP 429, 500 and 400 are http_429, http_5xx and http_4xx errors; the next request is fine', async (t) => {
  const faults = [
    { kind: 'http_error', status: 429, retry_after_s: 1, times: 1 },
    { kind: 'http_error', status: 500, times: 1 },
    { kind: 'http_error', status: 400, times: 1 },
  ];
  const { records, result } = await run(t, { agents: { count: 1, rounds: 4 }, engine: { faults } });
  const rs = byAgentRound(records);
  assert.deepEqual(
    rs.map((r) => [r.status, r.http_status, r.error?.class ?? null]),
    [
      ['error', 429, 'http_429'],
      ['error', 500, 'http_5xx'],
      ['error', 400, 'http_4xx'],
      ['ok', 200, null],
    ],
    show(rs),
  );
  assert.match(rs[1]!.error!.message, /HTTP 500: .*engine fault: HTTP 500/, 'the message holds the start of the body');
  assert.deepEqual(result.summary.errors_by_class, { http_429: 1, http_5xx: 1, http_4xx: 1 });
});

test('malformed SSE, invalid JSON, an error event and bad tool-call arguments are each their own class; a line that is no SSE field is ignored', async (t) => {
  const faults = [
    { kind: 'malformed_sse', times: 1 },
    { kind: 'malformed_sse', line: 'data: {oops', times: 1 },
    { kind: 'malformed_sse', line: 'data: {"error": {"message": "boom", "code": 503}}', times: 1 },
    { kind: 'bad_tool_arguments', times: 1 },
    { kind: 'malformed_sse', line: 'this line is not server-sent events', times: 1 },
  ];
  const { records } = await run(t, { agents: { count: 1, rounds: 6 }, engine: { faults } });
  const rs = byAgentRound(records);
  assert.deepEqual(
    rs.map((r) => r.error?.class ?? r.status),
    ['malformed_sse', 'invalid_json', 'server_error_event', 'invalid_tool_arguments', 'ok', 'ok'],
    show(rs),
  );
  assert.match(rs[0]!.error!.message, /not\.a\.chunk/);
  assert.match(rs[2]!.error!.message, /server error in stream: boom/);
  assert.ok(rs.every((r) => r.http_status === 200));
});

test('close_idle on arrival: every reuse after the idle time is a keepalive_race, the fresh socket after it is fine', async (t) => {
  const { records } = await run(t, {
    agents: { rounds: 4, think_time_ms: 200 },
    engine: { faults: [{ kind: 'close_idle', idle_ms: 100, advertise_timeout_s: 60 }] },
  });
  const rs = byAgentRound(records);
  for (const agent of [0, 1]) {
    const mine = rs.filter((r) => r.agent === agent);
    // ok on a fresh socket, the race on its reuse, then afresh: ok, race.
    assert.deepEqual(
      mine.map((r) => [r.connection?.nth ?? null, r.error?.class ?? r.status]),
      [
        [1, 'ok'],
        [2, 'keepalive_race'],
        [1, 'ok'],
        [2, 'keepalive_race'],
      ],
      show(mine),
    );
    assert.ok(mine.filter((r) => r.status === 'error').every((r) => r.bytes === 0 && r.headers_ms === null && (r.connection?.idle_ms ?? 0) >= 150));
  }
});

test('close_idle by timer, or a Keep-Alive hint of 2 s or less, gives no errors: the client sees the close or never reuses', async (t) => {
  // 300 ms between the server's close and the next send: the client has long seen the FIN, even under load.
  const timer = await run(t, { agents: { rounds: 3, think_time_ms: 400 }, engine: { faults: [{ kind: 'close_idle', idle_ms: 100, on: 'timer' }] } });
  assert.ok(
    timer.records.every((r) => r.status === 'ok' && r.connection?.nth === 1),
    show(timer.records),
  );
  // undici keeps a socket for the hint minus 2 s: timeout=2 leaves nothing, so the arrival-mode fault never bites.
  const hint = await run(t, { agents: { rounds: 3, think_time_ms: 150 }, engine: { faults: [{ kind: 'close_idle', idle_ms: 100, advertise_timeout_s: 2 }] } });
  assert.ok(
    hint.records.every((r) => r.status === 'ok' && r.connection?.nth === 1),
    show(hint.records),
  );
});

test('a clean run of 8 agents × 20 rounds has no hangs and no errors', async (t) => {
  const { records, result, hangEvents } = await run(t, { agents: { count: 8, rounds: 20 }, watchdog: { stall_ms: 2000, first_token_ms: 3000, headers_ms: 3000, total_ms: 10_000 } });
  assert.equal(records.length, 160);
  assert.ok(
    records.every((r) => r.status === 'ok'),
    show(records.filter((r) => r.status !== 'ok')),
  );
  assert.equal(result.summary.hangs.total, 0);
  assert.equal(hangEvents.length, 0);
});

test('on_hang abort-agent: each agent stops after its first hang; abort: it goes on', async (t) => {
  const faults = [{ kind: 'hang_before_headers', from_round: 2, times: 2 }];
  const stopAgent = await run(t, { agents: { rounds: 4 }, watchdog: { on_hang: 'abort-agent', headers_ms: 400, first_token_ms: 1000 }, engine: { faults } });
  const rs = byAgentRound(stopAgent.records);
  assert.deepEqual(
    rs.map((r) => [r.agent, r.round, r.status]),
    [
      [0, 1, 'ok'],
      [0, 2, 'hang'],
      [1, 1, 'ok'],
      [1, 2, 'hang'],
    ],
    show(rs),
  );
  assert.ok(rs.filter((r) => r.status === 'hang').every((r) => r.hang?.policy === 'abort-agent'));
  const goOn = await run(t, { agents: { rounds: 4 }, watchdog: { on_hang: 'abort', headers_ms: 400, first_token_ms: 1000 }, engine: { faults } });
  assert.equal(goOn.records.length, 8, show(goOn.records));
  assert.equal(goOn.records.filter((r) => r.status === 'hang').length, 2);
});

test('on_hang wait: the hang event goes out at the deadline, the request stays open until total_ms, the record is a hang of the first phase', async (t) => {
  const { records, hangEvents, wallMs } = await run(t, {
    agents: { count: 1, rounds: 1 },
    watchdog: { on_hang: 'wait', total_ms: 2500 },
    engine: { faults: [{ kind: 'stall_mid_stream', after_chunks: 2 }] },
  });
  assert.equal(records.length, 1);
  const r = records[0]!;
  assert.equal(r.status, 'hang');
  assert.equal(r.hang?.phase, 'mid_stream', 'the first phase that stalled, not total');
  assert.equal(r.hang?.policy, 'wait');
  assert.equal(r.hang?.outcome, 'total');
  assert.ok(r.e2e_ms >= 2500 && r.e2e_ms < 2500 + Math.max(1000, loop.marginMs()), `kept open to total_ms: ${r.e2e_ms}`);
  assert.ok((r.hang?.waited_ms ?? 0) >= 1200, `waited ${r.hang?.waited_ms}`);
  assert.equal(hangEvents.length, 1, 'one hang event, at the deadline');
  const ev = hangEvents[0]!;
  assert.ok(ev.record.e2e_ms >= 800 && ev.record.e2e_ms < 800 + Math.max(1200, loop.marginMs()), `the event is the snapshot at the stall deadline: ${ev.record.e2e_ms}`);
  assert.equal(ev.record.hang?.chunks, 2);
  assert.ok(wallMs < 2500 + 5000, `the run ends within total_ms + 5 s: ${wallMs}`);
});

test('on_hang wait: a request that moves again after the deadline and completes is still a hang, outcome completed', async (t) => {
  const { records, hangEvents } = await run(t, {
    agents: { count: 1, rounds: 2 },
    watchdog: { on_hang: 'wait', total_ms: 6000 },
    engine: { faults: [{ kind: 'drip', after_chunks: 2, interval_ms: 1200, bytes: 1, times: 1 }] },
  });
  const rs = byAgentRound(records);
  assert.deepEqual(
    rs.map((r) => r.status),
    ['hang', 'ok'],
    show(rs),
  );
  assert.equal(rs[0]!.hang?.phase, 'mid_stream');
  assert.equal(rs[0]!.hang?.outcome, 'completed');
  assert.ok(rs[0]!.finish_reason !== null, 'the stream did finish');
  assert.equal(rs[1]!.round, 2, 'the agent went on');
  assert.equal(hangEvents.length, 1);
});

test('on_hang wait: a run stopped while a hung request waits ends after the stop grace, before total_ms, with outcome stopped', async (t) => {
  const stop = new AbortController();
  // 1.2 s: past the embedded deployment's start on its thread (a few hundred ms the first time in a process).
  const timer = setTimeout(() => stop.abort(), 1200);
  t.after(() => clearTimeout(timer));
  // The stop at 1.2 s gives in-flight requests the 2 s grace, then ends them: well before total_ms (10 s).
  const { records, result, wallMs } = await run(t, { agents: { count: 1, rounds: 1 }, watchdog: { on_hang: 'wait', total_ms: 10_000 }, engine: { faults: [{ kind: 'hang' }] } }, stop.signal);
  assert.equal(result.status, 'interrupted');
  assert.equal(records[0]?.status, 'hang');
  assert.equal(records[0]?.hang?.phase, 'first_token');
  assert.equal(records[0]?.hang?.outcome, 'stopped');
  assert.ok(wallMs < 7000, `stopped before total_ms: ${wallMs}`);
});

test('retry always: a 500 is resent once and both attempts are recorded; none: not resent; idempotent-safe: not for a 500', async (t) => {
  const faults = [{ kind: 'http_error', status: 500, times: 1 }];
  const always = await run(t, { retry: 'always', agents: { count: 1, rounds: 2 }, engine: { faults } });
  const rs = byAgentRound(always.records);
  assert.deepEqual(
    rs.map((r) => [r.round, r.attempt ?? 1, r.error?.class ?? r.status]),
    [
      [1, 1, 'http_5xx'],
      [1, 2, 'ok'],
      [2, 1, 'ok'],
    ],
    show(rs),
  );
  assert.equal(rs[0]!.attempt, undefined, 'the first attempt carries no attempt field');
  for (const policy of ['none', 'idempotent-safe']) {
    const once = await run(t, { retry: policy, agents: { count: 1, rounds: 2 }, engine: { faults } });
    assert.deepEqual(
      byAgentRound(once.records).map((r) => [r.round, r.error?.class ?? r.status]),
      [
        [1, 'http_5xx'],
        [2, 'ok'],
      ],
      policy,
    );
  }
});

test('retry idempotent-safe resends the keep-alive race once, on a fresh socket; a hang is never resent', async (t) => {
  const race = await run(t, { retry: 'idempotent-safe', agents: { count: 1, rounds: 2, think_time_ms: 200 }, engine: { faults: [{ kind: 'close_idle', idle_ms: 100 }] } });
  const rs = byAgentRound(race.records);
  assert.deepEqual(
    rs.map((r) => [r.round, r.attempt ?? 1, r.connection?.nth ?? null, r.error?.class ?? r.status]),
    [
      [1, 1, 1, 'ok'],
      [2, 1, 2, 'keepalive_race'],
      [2, 2, 1, 'ok'],
    ],
    show(rs),
  );
  const hang = await run(t, { retry: 'always', agents: { count: 1, rounds: 1 }, engine: { faults: [{ kind: 'hang_before_headers' }] }, watchdog: { headers_ms: 300, first_token_ms: 1000 } });
  assert.equal(hang.records.length, 1);
  assert.equal(hang.records[0]?.status, 'hang');
});

test('`roundload run` against an engine that hangs every request after round 3 ends on time with exit 1 and a round-4 hang for every agent', async (t) => {
  const dir = tempDir(t);
  const out = join(dir, 'run');
  const file = join(dir, 'hang-after-3.yaml');
  writeFileSync(file, JSON.stringify(merge(BASE, { agents: { count: 4, rounds: 5 }, engine: { faults: [{ kind: 'hang', from_round: 4 }] } })));
  // Bounded as a whole (tsx start-up included, whatever the machine's load)…
  const res = await runCli(['run', file, '--out', out], { timeoutMs: 30_000 });
  assert.equal(res.code, 1, res.stderr);
  const records = readJsonl<RequestRecord>(join(out, 'requests.jsonl'));
  // …and on time by its own clock: rounds 4 and 5 (the failed round is re-sent) each hang for first_token_ms
  // (1.5 s), then the run ends: within a second of the last hang, plus the worst event-loop delay the run
  // measured (a loaded machine's, not the run's).
  const runEnd = readJsonl<RunEvent>(join(out, 'events.jsonl')).find((e) => e.kind === 'run_end');
  const lastEndMs = Math.max(...records.map((r) => r.run_ms + r.e2e_ms));
  const slackMs = 1000 + (JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Summary).client.loop_delay_p99_ms_max;
  assert.ok(runEnd !== undefined && runEnd.run_ms - lastEndMs < slackMs, `run_end ${runEnd?.run_ms} ms, the last hang ended at ${Math.round(lastEndMs)} ms (slack ${Math.round(slackMs)} ms)`);
  for (let agent = 0; agent < 4; agent += 1) {
    const mine = byAgentRound(records.filter((r) => r.agent === agent));
    assert.deepEqual(
      mine.map((r) => r.status),
      ['ok', 'ok', 'ok', 'hang', 'hang'],
      show(mine),
    );
    assert.equal(mine[3]!.hang?.phase, 'first_token');
  }
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Summary;
  assert.equal(summary.hangs.total, 8);
  assert.deepEqual(summary.hangs.by_round, { '4': 4, '5': 4 });
  assert.match(
    res.stdout,
    /hangs +8: by phase first_token 8; by round 4 4, 5 4; on fresh sockets 4, on reused sockets 4 \(nth 4: 4\)/,
    'round 4 hangs on the reused socket, its re-send on a fresh one',
  );
});

test('`roundload engine --faults FILE` serves with the faults; a bad faults file exits 2 with a located error', async (t) => {
  const dir = tempDir(t);
  const bad = join(dir, 'bad.yaml');
  writeFileSync(bad, '- kind: stall_mid_stream\n  after_chunk: 3\n');
  const res = await runCli(['engine', '--port', '0', '--faults', bad], { timeoutMs: 20_000 });
  assert.equal(res.code, 2, res.stderr);
  assert.match(res.stderr, /bad\.yaml:2:3 +engine\.faults\.0\.after_chunk +unknown key "after_chunk"/);
  assert.doesNotMatch(res.stderr, /\n\s+at /, 'no stack trace');

  const good = join(dir, 'faults.yaml');
  writeFileSync(good, 'faults:\n  - kind: http_error\n    status: 503\n');
  const child = spawn(process.execPath, cliArgs('engine', '--port', '0', '--faults', good), {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  t.after(() => child.kill('SIGKILL'));
  let stderr = '';
  const url = await new Promise<string>((resolve, reject) => {
    // Generous: starting the CLI through tsx takes seconds on a loaded machine; an early exit fails at once.
    const timer = setTimeout(() => reject(new Error(`no "listening" and "faults" lines: ${stderr}`)), 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the engine exited (${code}) before listening: ${stderr}`));
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      const m = /listening on (http:\/\/\S+).*\nfaults: /.exec(stderr);
      if (m !== null) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
  });
  assert.match(stderr, /faults: http_error/);
  const answer = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
  });
  assert.equal(answer.status, 503);
  await answer.text();
  const code = await new Promise<number | null>((resolve) => {
    child.once('close', (c) => resolve(c));
    child.kill('SIGINT');
  });
  assert.equal(code, 0);
});
