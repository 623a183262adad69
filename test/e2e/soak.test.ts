import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import { isRequestRecord, readJsonlFile, resultPath } from '../../src/results/index.js';
import type { RequestRecord } from '../../src/types/index.js';
import { readJsonl, tempDir } from '../helpers/tmp.js';
import { LoopDelay } from '../helpers/loop-delay.js';

async function records(dir: string): Promise<RequestRecord[]> {
  const out: RequestRecord[] = [];
  await readJsonlFile(resultPath(dir, 'requests'), isRequestRecord, (v) => out.push(v));
  return out;
}

function events(dir: string): { kind: string; run_ms: number }[] {
  return readJsonl<{ kind: string; run_ms: number }>(join(dir, 'events.jsonl'));
}

function byConversation(rs: readonly RequestRecord[]): Map<string, RequestRecord[]> {
  const out = new Map<string, RequestRecord[]>();
  for (const r of rs) out.set(r.conversation, [...(out.get(r.conversation) ?? []), r]);
  for (const list of out.values()) list.sort((a, b) => a.round - b.round);
  return out;
}

const ENGINE = 'engine: {decode_step_ms: 3, output_tokens_min: 10, output_tokens_max: 40}\n';

test('an 8 s soak: agents restart conversations at agents.rounds until the duration, and every 2 s window shows figures', async (t) => {
  const workload = parseWorkload(`name: soak\nduration: 8s\nwindow_s: 2\nagents: {count: 4, rounds: 3, think_time_ms: 50}\n${ENGINE}`, 'soak.yaml');
  const out = join(tempDir(t), 'run');
  const loop = new LoopDelay();
  const started = performance.now();
  const result = await executeRun({ workload, out });
  const wallS = (performance.now() - started) / 1000;
  loop.stop();
  // The duration's end is a timer: late by as much as this process's loop ran late (measured).
  const margin = Math.max(50, loop.marginMs());
  assert.equal(result.status, 'completed');
  assert.ok(wallS >= 8 && wallS < 12 + margin / 1000, `ran ${wallS.toFixed(1)} s for an 8 s duration (margin ${margin.toFixed(0)} ms)`);
  const rs = await records(out);
  assert.equal(result.summary.totals.requests, rs.length);
  assert.ok(
    rs.every((r) => r.status === 'ok'),
    JSON.stringify(rs.find((r) => r.status !== 'ok')),
  );
  const phaseStartMs = events(out).find((e) => e.kind === 'phase')!.run_ms;
  const lastSendMs = Math.max(...rs.map((r) => r.run_ms));
  assert.ok(lastSendMs <= phaseStartMs + 8000 + margin, `no request is sent after the duration (last at ${lastSendMs} ms, the phase from ${phaseStartMs} ms, margin ${margin.toFixed(0)} ms)`);

  const conversations = byConversation(rs);
  for (let agent = 0; agent < 4; agent += 1) {
    const ids = [...conversations.keys()].filter((id) => id.startsWith(`a${agent}-`));
    assert.ok(ids.length >= 3, `agent ${agent} ran ${ids.length} conversations`);
    const ordinals = ids.map((id) => Number(id.split('-c')[1])).sort((a, b) => a - b);
    assert.deepEqual(
      ordinals,
      Array.from({ length: ids.length }, (_, i) => i + 1),
      'a<agent>-c1, -c2, … with no gap',
    );
    for (const id of ids) {
      const rounds = conversations.get(id)!.map((r) => r.round);
      // Every conversation counts rounds from 1; only the one the duration cut short has fewer than 3.
      assert.deepEqual(
        rounds,
        Array.from({ length: rounds.length }, (_, i) => i + 1),
        id,
      );
      if (id !== `a${agent}-c${ids.length}`) assert.equal(rounds.length, 3, id);
    }
  }
  // A fresh conversation starts from the first prompt again: round 1 prompts stay level, round 3 is bigger.
  const round1 = rs.filter((r) => r.round === 1).map((r) => r.prompt_tokens!);
  const round3 = rs.filter((r) => r.round === 3).map((r) => r.prompt_tokens!);
  assert.ok(Math.max(...round1) - Math.min(...round1) < 0.1 * Math.min(...round1), `round 1 prompts ${Math.min(...round1)}–${Math.max(...round1)}`);
  assert.ok(Math.min(...round3) > Math.max(...round1));

  const windows = result.summary.windows;
  assert.ok(windows.length >= 4, `${windows.length} windows`);
  // Windows are on the run's clock; a request counts in the one it ended in and its tokens in those its decode
  // crossed: the first is the window of the first token streamed (later than 0 when a loaded machine slowed the
  // engine's start or the first answers; before the first end when an answer streamed across a boundary).
  const firstS = Math.floor(Math.min(...rs.map((r) => r.run_ms + ((r.completion_tokens ?? 0) > 0 ? (r.ttft_ms ?? r.e2e_ms) : r.e2e_ms))) / 2000) * 2;
  assert.deepEqual(
    windows.slice(0, 4).map((w) => w.start_s),
    [firstS, firstS + 2, firstS + 4, firstS + 6],
    'consecutive 2 s windows',
  );
  windows.slice(0, 4).forEach((w, i) => {
    assert.ok(w.output_tokens_per_s > 0, JSON.stringify(w));
    // The first may hold only the start of answers that ended in the next.
    if (i > 0) assert.ok(w.requests > 0 && w.ttft_p99_ms !== null, JSON.stringify(w));
  });
  assert.equal(
    windows.reduce((n, w) => n + w.requests, 0),
    rs.length,
    'every request is in exactly one window',
  );
  assert.equal(result.summary.thresholds.ok, true);
  assert.deepEqual(
    result.summary.thresholds.results.map((r) => [r.name, r.ok]),
    [
      ['ok_requests', true],
      ['hangs', true],
      ['error_rate', true],
    ],
  );
  assert.equal(result.summary.thresholds.results[1]!.message, '0 hung requests ≤ limit 0');
});

test('a context cap ends conversations before their rounds, and the agent starts a fresh one', async (t) => {
  const workload = parseWorkload(`name: capped\nduration: 4s\nagents: {count: 2, rounds: 50, think_time_ms: 0}\nconversation: {max_context_tokens: 2000}\n${ENGINE}`, 'capped.yaml');
  const out = join(tempDir(t), 'run');
  const result = await executeRun({ workload, out });
  assert.equal(result.status, 'completed');
  const conversations = byConversation(await records(out));
  let capped = 0;
  for (let agent = 0; agent < 2; agent += 1) {
    const ids = [...conversations.keys()].filter((id) => id.startsWith(`a${agent}-`)).sort((a, b) => Number(a.split('-c')[1]) - Number(b.split('-c')[1]));
    assert.ok(ids.length >= 2, `agent ${agent} restarted (${ids.length} conversations)`);
    for (const id of ids.slice(0, -1)) {
      const list = conversations.get(id)!;
      assert.ok(list.length >= 2 && list.length < 50, `${id} ended at the cap after ${list.length} rounds`);
      // The request that took it to the cap went out; the next one would have been past it.
      const last = list.at(-1)!;
      assert.ok(last.request_bytes / 4 < 2000 * 1.3, `${id}'s last request was near the cap (${Math.round(last.request_bytes / 4)} tokens)`);
      assert.ok(
        last.context_cap !== undefined && last.context_cap.context_tokens >= 2000 && last.context_cap.rounds_left === 50 - list.length,
        `${id} says it ended at the cap: ${JSON.stringify(last.context_cap)}`,
      );
      capped += 1;
    }
  }
  // Each is counted and named in the summary (a conversation ended by the duration is not).
  assert.ok((result.summary.conversations?.context_capped ?? 0) >= capped, JSON.stringify(result.summary.conversations));
  assert.equal(result.summary.conversations?.requests_planned, null, 'a run that lasts a time plans no request count');
});
