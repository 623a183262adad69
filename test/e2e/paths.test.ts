// Runs against an https target (the built-in hop standing in for a TLS server): CA, servername, insecure.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import { startEngine, type EngineHandle } from '../../src/engine/index.js';
import { startHop, makeCertificates, type HopHandle } from '../../src/hop/index.js';
import type { RequestRecord } from '../../src/types/index.js';
import { engineSchema } from '../../src/config/schema.js';
import { readJsonl, tempDir } from '../helpers/tmp.js';

type Ctx = import('node:test').TestContext;

async function backend(t: Ctx): Promise<{ engine: EngineHandle; hop: HopHandle }> {
  const engine = await startEngine({ settings: engineSchema.parse({ decode_step_ms: 3, output_tokens_max: 16 }) });
  const hop = await startHop({ upstream: engine.url });
  t.after(async () => {
    await hop.close();
    await engine.close();
  });
  return { engine, hop };
}

async function run(t: Ctx, target: string): Promise<RequestRecord[]> {
  const out = join(tempDir(t), 'run');
  const workload = parseWorkload(
    `name: paths
target: ${target}
agents: {count: 2, rounds: 3, think_time_ms: 20}
conversation: {max_tokens: 64, system_prompt_tokens: 200, first_user_tokens: 50}
watchdog: {connect_ms: 800, headers_ms: 3000, first_token_ms: 3000, stall_ms: 3000, total_ms: 8000}
monitor: {canary_interval_s: 0}
`,
    'paths.yaml',
  );
  await executeRun({ workload, out });
  return readJsonl<RequestRecord>(join(out, 'requests.jsonl')).sort((a, b) => a.agent - b.agent || a.round - b.round);
}

const classes = (rs: RequestRecord[]) => rs.map((r) => (r.status === 'ok' ? 'ok' : `${r.status}:${r.error?.class ?? r.hang?.phase}`));

test('an https target with the wrong CA fails every request with class tls; with target.tls.ca it succeeds, verified', async (t) => {
  const { hop } = await backend(t);
  const other = await makeCertificates(tempDir(t));
  const wrong = await run(t, `{url: "${hop.url}", tls: {ca: "${other.caFile}"}}`);
  assert.equal(wrong.length, 6);
  assert.deepEqual(new Set(classes(wrong)), new Set(['error:tls']), JSON.stringify(wrong[0]?.error));
  assert.ok(wrong.every((r) => r.path === 'direct' && r.http_status === null));
  const none = await run(t, `{url: "${hop.url}"}`);
  assert.deepEqual(new Set(classes(none)), new Set(['error:tls']), 'Node\'s roots alone do not trust the hop');
  const right = await run(t, `{url: "${hop.url}", tls: {ca: "${hop.caFile}"}}`);
  assert.deepEqual(new Set(classes(right)), new Set(['ok']));
  assert.ok(right.every((r) => r.connection?.tls?.authorized === true && r.connection.tls.protocol?.startsWith('TLS')));
  assert.deepEqual(right.filter((r) => r.agent === 0).map((r) => r.connection?.nth), [1, 2, 3], 'one TLS socket per agent, reused');
});

test('target.tls.servername is the name verified; tls.insecure skips verification and the record says so', async (t) => {
  const { hop } = await backend(t);
  const named = await run(t, `{url: "${hop.url}", tls: {ca: "${hop.caFile}", servername: localhost}}`);
  assert.deepEqual(new Set(classes(named)), new Set(['ok']));
  const mismatch = await run(t, `{url: "${hop.url}", tls: {ca: "${hop.caFile}", servername: example.com}}`);
  assert.deepEqual(new Set(classes(mismatch)), new Set(['error:tls']), JSON.stringify(mismatch[0]?.error));
  const insecure = await run(t, `{url: "${hop.url}", tls: {insecure: true}}`);
  assert.deepEqual(new Set(classes(insecure)), new Set(['ok']));
  assert.ok(insecure.every((r) => r.connection?.tls?.authorized === false), 'unverified, and recorded as such');
});

test('the built-in hop in front of an https target verifies it with target.tls: ok with its CA, a 502 without', async (t) => {
  const { hop: inner } = await backend(t);
  const trusted = await run(t, `{url: "${inner.url}", tls: {ca: "${inner.caFile}"}, via: {kind: hop}}`);
  assert.deepEqual(new Set(classes(trusted)), new Set(['ok']));
  assert.ok(trusted.every((r) => r.path === 'hop' && r.connection?.tls?.authorized === true));
  const untrusted = await run(t, `{url: "${inner.url}", via: {kind: hop}}`);
  assert.deepEqual(new Set(classes(untrusted)), new Set(['error:http_5xx']));
  assert.match(untrusted[0]!.error!.message, /HTTP 502.*roundload hop: upstream/);
});
