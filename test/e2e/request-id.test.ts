// Request ids the engine logs: a run against the embedded engine with a stalled stream names the hung request
// by one id everywhere — requests.jsonl, the hang event, the hang probe's environment, the engine's own log,
// report.html and the reproducer — and a server that refuses unknown body fields gets no `rid` by default.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import { writeRepro } from '../../src/repro/index.js';
import type { HangEvent, ProbeEvent, RequestRecord } from '../../src/types/index.js';
import { readJsonl, tempDir } from '../helpers/tmp.js';

const WORKLOAD = {
  name: 'request-id',
  agents: { count: 1, rounds: 2, think_time_ms: 0 },
  conversation: { system_prompt_tokens: 40, first_user_tokens: 20, user_turn_tokens: 10, tool_result_tokens: 20, max_tokens: 24 },
  watchdog: { connect_ms: 2000, headers_ms: 1500, first_token_ms: 1500, stall_ms: 800, total_ms: 3000 },
  monitor: {
    canary_interval_s: 0,
    probes: [{ name: 'engine-log', command: 'printf "%s\\n" "$ROUNDLOAD_REQUEST_ID"; sleep 0.3; grep -rhF -- "$ROUNDLOAD_REQUEST_ID" "$ROUNDLOAD_RUN_DIR/engine"', on: ['hang'], timeout_s: 5 }],
  },
  engine: {
    decode_step_ms: 2,
    decode_step_ms_per_running: 0,
    prefill_ms_per_1k_tokens: 1,
    output_tokens_min: 10,
    output_tokens_max: 14,
    reasoning: 'off',
    faults: [{ kind: 'stall_mid_stream', after_chunks: 3, from_round: 2 }],
  },
};

function engineLog(out: string): string {
  const dir = join(out, 'engine');
  return readdirSync(dir)
    .map((f) => readFileSync(join(dir, f), 'utf8'))
    .join('\n');
}

test('a hung request is named by one id in requests.jsonl, the hang event, the probe, the engine log, report.html and repro', async (t) => {
  const out = join(tempDir(t), 'run');
  await executeRun({ workload: parseWorkload(JSON.stringify(WORKLOAD), 'request-id.yaml'), out, preflight: false });
  const records = readJsonl<RequestRecord>(join(out, 'requests.jsonl'));
  const hung = records.find((r) => r.status === 'hang');
  assert.ok(hung !== undefined, JSON.stringify(records.map((r) => r.status)));
  const id = hung.request_id!;
  assert.match(id, /^rl-[0-9a-f]{6}-a0-c1-r2-\d+$/);
  assert.equal(new Set(records.map((r) => r.request_id)).size, records.length, 'every request has its own id');
  const events = readJsonl<{ kind: string }>(join(out, 'events.jsonl'));
  const hangEvent = events.find((e): e is HangEvent => e.kind === 'hang');
  assert.equal(hangEvent?.record.request_id, id);
  // The engine took the body's rid as its own id and logged it, SGLang-style.
  assert.ok(engineLog(out).includes(`Receive: obj=GenerateReqInput(rid='${id}', stream=True)`), engineLog(out));
  const probe = events.find((e): e is ProbeEvent => e.kind === 'probe');
  assert.equal(probe?.request_id, id);
  assert.ok(probe.stdout.startsWith(`${id}\n`), probe.stdout);
  assert.match(probe.stdout, new RegExp(`rid='${id}'`), 'the probe found the hung request in the engine log by its id');
  const report = readFileSync(join(out, 'report.html'), 'utf8');
  assert.ok(report.includes(`<code>${id}</code>`), 'report.html names the hung request');
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as { diagnosis: { evidence: string[] } };
  assert.ok(
    summary.diagnosis.evidence.some((e) => e.includes(JSON.stringify(id))),
    summary.diagnosis.evidence.join('\n'),
  );
  await writeRepro(out);
  const readme = readFileSync(join(out, 'repro', 'README.txt'), 'utf8');
  // A request id is plain: shell-quoting leaves it bare.
  assert.ok(readme.includes(`grep -F ${id} ENGINE_LOG`), readme);
  assert.ok(readFileSync(join(out, 'repro', 'repro.mjs'), 'utf8').includes(id));
});

test('a server that refuses unknown body fields gets X-Request-Id but no rid by default', async (t) => {
  const seen: { headers: IncomingMessage['headers']; body: Record<string, unknown> }[] = [];
  const known = new Set(['model', 'messages', 'stream', 'stream_options', 'max_tokens', 'temperature', 'tools', 'tool_choice']);
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      const body = JSON.parse(text) as Record<string, unknown>;
      seen.push({ headers: req.headers, body });
      const unknown = Object.keys(body).filter((k) => !known.has(k));
      if (unknown.length > 0) {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `Unrecognized request argument supplied: ${unknown.join(', ')}` } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'ok' }, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const out = join(tempDir(t), 'run');
  const workload = parseWorkload(JSON.stringify({ ...WORKLOAD, monitor: { canary_interval_s: 0 }, engine: undefined, target: { url, model: 'm' }, agents: { count: 1, rounds: 1 } }), 'strict.yaml');
  await executeRun({ workload, out, preflight: false });
  const records = readJsonl<RequestRecord>(join(out, 'requests.jsonl'));
  assert.deepEqual(
    records.map((r) => r.status),
    ['ok'],
  );
  assert.equal(seen.length, 1);
  assert.equal(seen[0]!.headers['x-request-id'], records[0]!.request_id);
  assert.equal(seen[0]!.body['rid'], undefined);
});
