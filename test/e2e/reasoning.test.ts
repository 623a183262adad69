// A whole run against a server streaming in SGLang's exact format for a reasoning model (deepseek-v4-flash with
// the deepseek-v4 reasoning parser and a tool-call parser): what goes back in the history, the figures beside
// TTFT, the request extras reaching the server, and what the summary, the terminal and report.html show.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import { formatSummary } from '../../src/report/index.js';
import { loadRun } from '../../src/compare/index.js';
import { rebuildSummary } from '../../src/results/index.js';
import type { RequestRecord } from '../../src/types/index.js';
import { VERSION } from '../../src/version.js';
import { readJsonl, tempDir } from '../helpers/tmp.js';
import { assistantMessages, sglangServer, type ScriptedAnswer } from '../helpers/sglang-server.js';
import { LoopDelay } from '../helpers/loop-delay.js';

/** Rounds 1 and 2 answer with a tool call, round 3 with content; each thinks first, in words tied to the request. */
function script({ n, conversation, body }: { n: number; conversation: string | null; body: Record<string, unknown> }): ScriptedAnswer {
  if (conversation === null) return { reasoning: ['Fine.'], content: ['ok'] };
  const round = assistantMessages(body).length + 1;
  const reasoning = Array.from({ length: 6 }, (_, i) => `r${n}.${i} `);
  const usage = { spelling: 'sglang' as const, reasoningTokens: 100 + n };
  if (round < 3) return { reasoning, toolCalls: [{ name: 'read_file', arguments: ['{"path": ', `"src/${n}.ts"}`] }], firstTokenDelayMs: 5, tokenIntervalMs: 8, usage };
  return { reasoning, content: ['All', ' done', '.'], firstTokenDelayMs: 5, tokenIntervalMs: 8, usage };
}

const WORKLOAD = (url: string, options: { agents?: number; history?: 'keep' | 'drop'; canaries?: boolean } = {}) => `
name: reasoning
target:
  url: ${url}
  bypass: ${url}
  extra_body:
    chat_template_kwargs: {thinking: true}
    separate_reasoning: true
  headers:
    X-Session-Id: s-7
    X-Api-Key: sk-h8-secret-value
agents: {count: ${options.agents ?? 2}, rounds: 3, think_time_ms: 0}
conversation: {system_prompt_tokens: 50, first_user_tokens: 20, tool_result_tokens: 20, tool_result_growth_tokens: 0, reasoning_history: ${options.history ?? 'keep'}}
monitor: {canary_interval_s: ${options.canaries === false ? 0 : 0.2}, canary_timeout_ms: 2000}
`;

test('a run against an SGLang-format reasoning server: reasoning goes back in the history, ttfc − ttft is the reasoning time, reasoning_tokens come from usage, extras and User-Agent reach the server, TTFT/TTFC/TPOT per round in summary, terminal and report', async (t) => {
  const server = await sglangServer(t, script);
  const out = join(tempDir(t), 'run');
  const delay = new LoopDelay();
  t.after(() => delay.stop());
  const argv = ['run', 'reasoning.yaml', '--set', 'target.headers.X-Api-Key=sk-h8-secret-value'];
  const result = await executeRun({ workload: parseWorkload(WORKLOAD(server.url), 'reasoning.yaml'), out, argv });
  assert.equal(result.status, 'completed');
  const records = readJsonl<RequestRecord>(join(out, 'requests.jsonl'));
  // (Once seen 4 under load, cause unknown: the message says whether the agents sent fewer or lines were lost.)
  assert.equal(
    records.length,
    6,
    JSON.stringify({
      records: records.map((r) => [r.conversation, r.round, r.status, r.attempt ?? 1]),
      totals: result.summary.totals,
      writer_dropped_lines: result.summary.client.writer_dropped_lines,
    }),
  );
  assert.ok(
    records.every((r) => r.status === 'ok'),
    JSON.stringify(records.find((r) => r.status !== 'ok')),
  );

  // The history: each later request's assistant turns carry, in order, the reasoning the server sent before.
  const agentRequests = server.requests.filter((r) => r.conversation !== null);
  for (const conversation of ['a0-c1', 'a1-c1']) {
    const sent = agentRequests.filter((r) => r.conversation === conversation);
    assert.equal(sent.length, 3);
    for (let i = 1; i < sent.length; i += 1) {
      const streamed = sent.slice(0, i).map((r) =>
        r.written
          .filter((w) => w.kind === 'reasoning')
          .map((w) => w.text)
          .join(''),
      );
      assert.deepEqual(
        assistantMessages(sent[i]!.body).map((m) => m.reasoning_content),
        streamed,
        `${conversation} request ${i + 1}`,
      );
    }
  }

  // ttfc − ttft against what the server spent thinking, within a margin from the loop delay measured meanwhile.
  const margin = delay.marginMs();
  for (const r of records) {
    const received = agentRequests.find((x) => x.conversation === r.conversation && assistantMessages(x.body).length === r.round - 1)!;
    const first = received.written[0]!;
    const firstAnswer = received.written.find((w) => w.kind !== 'reasoning')!;
    const thinking = firstAnswer.atMs - first.atMs;
    assert.ok(
      Math.abs(r.ttfc_ms! - r.ttft_ms! - thinking) <= margin,
      `${r.conversation} r${r.round}: ttfc ${r.ttfc_ms} − ttft ${r.ttft_ms} vs ${thinking.toFixed(2)} ms (margin ${margin.toFixed(1)} ms)`,
    );
    assert.ok(r.ttfc_ms! - r.ttft_ms! >= 40, 'six reasoning tokens 8 ms apart come first');
    // reasoning_tokens are the usage chunk's, not the 6 events.
    assert.equal(r.reasoning_tokens, received.usage!['reasoning_tokens']);
    assert.equal(r.reasoning_tokens_estimated, false);
    assert.ok(r.tpot_ms! > 0 && r.tokens_per_event! >= 1);
  }

  // Every request (agents, the preflight, canaries on both legs) carries the extras and says who it is.
  const kinds = new Set(server.requests.map((r) => (r.conversation !== null ? 'agent' : JSON.stringify(r.body).includes('canary') ? 'canary' : 'preflight')));
  assert.deepEqual([...kinds].sort(), ['agent', 'canary', 'preflight']);
  for (const r of server.requests) {
    assert.deepEqual(r.body['chat_template_kwargs'], { thinking: true }, `request ${r.n}`);
    assert.equal(r.body['separate_reasoning'], true);
    assert.equal(r.headers['user-agent'], `roundload/${VERSION}`);
    assert.equal(r.headers['x-session-id'], 's-7');
    assert.equal(r.headers['x-api-key'], 'sk-h8-secret-value');
  }
  // The secret-looking header's value reached the server, and no file of the run (run.json's argv included).
  for (const file of readdirSync(out)) assert.ok(!readFileSync(join(out, file), 'utf8').includes('sk-h8-secret-value'), file);
  assert.match(readFileSync(join(out, 'run.json'), 'utf8'), /target\.headers\.X-Api-Key=\*\*\*/);

  // summary.json: TTFC, TPOT and reasoning per round and phase; terminal and report show them.
  const summary = result.summary;
  const phase = summary.phases[0]!;
  for (const round of phase.rounds) {
    assert.equal(round.ttfc!.count, 2, `round ${round.round}`);
    assert.ok(round.ttfc!.p50_ms > round.ttft.p50_ms);
    assert.equal(round.tpot!.count, 2);
    assert.equal(round.reasoning!.count, 2);
  }
  assert.equal(
    summary.totals.reasoning_tokens,
    records.reduce((n, r) => n + r.reasoning_tokens!, 0),
  );
  assert.equal(summary.totals.reasoning_answers, 6);
  const terminal = formatSummary(summary, out);
  assert.match(terminal, /^round +reason tok +reason p50 +ttft p50 +ttfc p50 +ttfc p99 +itl p50 +tpot p50 +tpot p99 +tok\/event$/m);
  assert.match(terminal, /^1 +\d+ +[\d.]+ +[\d.]+ +[\d.]+ +[\d.]+ +[\d.]+ +[\d.]+ +[\d.]+ +[\d.]+$/m, 'round 1 has every figure');
  const html = readFileSync(join(out, 'report.html'), 'utf8');
  assert.match(html, /Reasoning and decode per round/);
  for (const h of ['TTFT p50', 'TTFC p50', 'TTFC p99', 'TPOT p50', 'TPOT p99', 'tok/event']) assert.ok(html.includes(`>${h}</th>`), h);
  assert.ok(html.includes('"id":"latency-ttfc"') && html.includes('"id":"latency-tpot"'), 'TTFC and TPOT by round are charted');

  // A rebuild gets the same TTFC and TPOT back from requests.jsonl; a comparison reads them per window.
  const rebuilt = await rebuildSummary(out);
  assert.deepEqual(
    rebuilt.summary.phases[0]!.rounds.map((r) => [r.ttfc, r.tpot, r.reasoning]),
    phase.rounds.map((r) => [r.ttfc, r.tpot, r.reasoning]),
  );
  const loaded = await loadRun(out);
  const windows = loaded.phases.get('main')!.windows;
  assert.equal(
    windows.reduce((n, w) => n + w.ttfc.total, 0),
    6,
  );
  assert.equal(
    windows.reduce((n, w) => n + w.tpot.total, 0),
    6,
  );
});

test('reasoning_history: drop sends no reasoning back, and requests stay smaller than with keep by exactly the reasoning sent', async (t) => {
  const sizes: Record<string, number[]> = {};
  const prompts: Record<string, number[]> = {};
  for (const mode of ['keep', 'drop'] as const) {
    const server = await sglangServer(t, script);
    const out = join(tempDir(t), mode);
    await executeRun({ workload: parseWorkload(WORKLOAD(server.url, { agents: 1, history: mode, canaries: false }), 'reasoning.yaml'), out, preflight: false });
    const agent = server.requests.filter((r) => r.conversation !== null);
    if (mode === 'drop')
      assert.ok(
        agent.every((r) => !JSON.stringify(r.body).includes('reasoning_content')),
        'no reasoning_content sent',
      );
    else assert.ok(agent.slice(1).every((r) => JSON.stringify(r.body).includes('reasoning_content')));
    const records = readJsonl<RequestRecord>(join(out, 'requests.jsonl')).sort((a, b) => a.round - b.round);
    sizes[mode] = records.map((r) => r.request_bytes);
    prompts[mode] = records.map((r) => r.prompt_tokens!);
  }
  // The server counts the prompt it got (about 4 characters a token): the reasoning kept makes it bigger.
  assert.ok(prompts['keep']![2]! > prompts['drop']![2]!, `${prompts['keep']?.join(',')} vs ${prompts['drop']?.join(',')}`);
  const reasoningJson = (n: number) => `,"reasoning_content":${JSON.stringify(Array.from({ length: 6 }, (_, i) => `r${n}.${i} `).join(''))}`.length;
  // Round 1 is the same; round 2 carries round 1's reasoning; round 3 that of rounds 1 and 2 (requests 1 and 2 of each server).
  assert.equal(sizes['keep']![0], sizes['drop']![0]);
  assert.equal(sizes['keep']![1]! - sizes['drop']![1]!, reasoningJson(1));
  assert.equal(sizes['keep']![2]! - sizes['drop']![2]!, reasoningJson(1) + reasoningJson(2));
});
