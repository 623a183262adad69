// A run judged from a sample, through the real run path: the collector lowered to a sample of 2 and 2 at each
// end of an episode (ROUNDLOAD_TEST_DIAGNOSIS_KEEP, a test knob) still gives a late burst of errors its own
// episode with its exact start and count, and the evidence says what the verdict was judged from.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import type { Summary } from '../../src/analysis/index.js';
import type { RequestRecord } from '../../src/types/index.js';
import { fakeChat, okAnswer } from '../helpers/fake-chat.js';
import { quietClient } from '../helpers/quiet-client.js';
import { readJsonl, tempDir } from '../helpers/tmp.js';

test('a run whose collector keeps 2 of each kind and 2 at each end still gives a late burst of 502s its own episode, with its exact count and start', async (t) => {
  const previous = process.env.ROUNDLOAD_TEST_DIAGNOSIS_KEEP;
  process.env.ROUNDLOAD_TEST_DIAGNOSIS_KEEP = '2';
  t.after(() => {
    if (previous === undefined) delete process.env.ROUNDLOAD_TEST_DIAGNOSIS_KEEP;
    else process.env.ROUNDLOAD_TEST_DIAGNOSIS_KEEP = previous;
  });
  // The preflight answered; then the server's own 503s for 1 s, answers for 5 s (the episodes' gap is 3 s
  // with no canaries), a proxy's 502 page for 1 s, answers after.
  let startMs: number | null = null;
  const server = await fakeChat(
    t,
    (req, res) => {
      if (req.n === 1) {
        okAnswer(res);
        return;
      }
      const now = performance.now();
      startMs ??= now;
      const at = now - startMs;
      if (at < 1000) {
        res.writeHead(503, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'the engine is overloaded', type: 'server_error' } }));
      } else if (at >= 6000 && at < 7000) {
        res.writeHead(502, { 'content-type': 'text/html' });
        res.end('<html><head><title>502 Bad Gateway</title></head><body>bad gateway</body></html>');
      } else okAnswer(res);
    },
    { models: ['deepseek-v4-flash'] },
  );
  const out = join(tempDir(t), 'run');
  const workload = parseWorkload(
    `name: sampled
target: {url: "${server.url}"}
duration: 8.5s
agents: {count: 4, rounds: 2, think_time_ms: 20}
conversation: {max_tokens: 16, tools: none}
monitor: {canary_interval_s: 0}
`,
    'sampled.yaml',
  );
  await executeRun({ workload, out, clientSample: quietClient });
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Summary;
  const records = readJsonl<RequestRecord>(join(out, 'requests.jsonl')).filter((r) => r.status === 'error' && r.error?.class !== 'aborted');
  const early = records.filter((r) => r.http_status === 503);
  const late = records.filter((r) => r.http_status === 502);
  assert.ok(early.length > 10 && late.length > 10, `503: ${early.length}, 502: ${late.length}`);
  const episodes = summary.diagnosis.episodes ?? [];
  const text = summary.diagnosis.evidence.join('\n');
  assert.deepEqual(
    episodes.map((e) => [e.kind, e.start_ms, e.requests]),
    [
      ['errors', Math.round(Math.min(...early.map((r) => r.run_ms))), early.length],
      ['errors', Math.round(Math.min(...late.map((r) => r.run_ms))), late.length],
    ],
    text,
  );
  assert.match(episodes[1]!.facts[0]!, new RegExp(`^${late.length} requests failed .*HTTP 502 ${late.length};`));
  const said = /judged from (\d+) of (\d+) failures: a sample across the run plus the first and last of each episode/.exec(text);
  assert.ok(said !== null, text);
  assert.equal(Number(said[2]), records.length);
  // The sample of 2 and 2 at each end of the two episodes: at most 10 spans.
  assert.ok(Number(said[1]) <= 10, said[0]);
});
