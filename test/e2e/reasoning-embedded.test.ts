// The reasoning figures and request extras against the embedded deployment (SGLang PD in miniature serving
// deepseek-v4-flash, which reasons first as the deepseek-v4 reasoning parser makes it): usage's reasoning count,
// TTFC after TTFT, the reasoning kept in the history, and `chat_template_kwargs.thinking: false` in extra_body
// switching thinking off.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import type { RequestRecord } from '../../src/types/index.js';
import { readJsonl, tempDir } from '../helpers/tmp.js';

const yaml = (history: 'keep' | 'drop', target = '{}') => `name: reasoning-embedded
target: ${target}
agents: {count: 2, rounds: 3, think_time_ms: 0}
conversation: {system_prompt_tokens: 100, first_user_tokens: 40, tool_result_tokens: 30, tool_result_growth_tokens: 0, max_tokens: 64, reasoning_history: ${history}}
engine: {decode_step_ms: 2, output_tokens_min: 8, output_tokens_max: 16, reasoning_tokens_max: 12}
monitor: {enabled: false, canary_interval_s: 0}
`;

async function records(t: Parameters<typeof tempDir>[0], history: 'keep' | 'drop', target?: string): Promise<RequestRecord[]> {
  const out = join(tempDir(t), 'run');
  const result = await executeRun({ workload: parseWorkload(yaml(history, target), 'r.yaml'), out });
  assert.equal(result.status, 'completed');
  const rs = readJsonl<RequestRecord>(join(out, 'requests.jsonl'));
  assert.ok(
    rs.every((r) => r.status === 'ok'),
    JSON.stringify(rs.find((r) => r.status !== 'ok')),
  );
  return rs.sort((a, b) => a.conversation.localeCompare(b.conversation) || a.round - b.round);
}

test('against the embedded deployment: reasoning counted from usage, TTFC after TTFT, reasoning kept in the history (and not with drop), thinking off through extra_body', async (t) => {
  const keep = await records(t, 'keep');
  const reasoned = keep.filter((r) => (r.reasoning_tokens ?? 0) > 0);
  assert.ok(reasoned.length >= 3, `most answers reason (${reasoned.length} of ${keep.length})`);
  for (const r of keep) {
    assert.equal(r.reasoning_tokens_estimated, false, 'the engine reports reasoning_tokens in usage');
    if ((r.reasoning_tokens ?? 0) > 1) assert.ok(r.ttfc_ms === null || r.ttfc_ms! > r.ttft_ms!, `${r.conversation} r${r.round}: ttfc ${r.ttfc_ms} after ttft ${r.ttft_ms}`);
    if (r.reasoning_tokens === 0) assert.equal(r.ttfc_ms, r.ttft_ms);
    assert.ok(r.tpot_ms! > 0 && r.tokens_per_event! >= 1);
  }
  // The same conversations with drop: each later request is smaller by exactly the reasoning sent back before
  // (`,"reasoning_content":"…"`: the engine's words need no JSON escaping).
  const drop = await records(t, 'drop');
  for (const conversation of ['a0-c1', 'a1-c1']) {
    const k = keep.filter((r) => r.conversation === conversation);
    const d = drop.filter((r) => r.conversation === conversation);
    assert.deepEqual(
      k.map((r) => r.reasoning_chars),
      d.map((r) => r.reasoning_chars),
      'the same answers both times',
    );
    let kept = 0;
    for (let i = 0; i < k.length; i += 1) {
      // The body's rid (the request's id) differs between the runs in length by its count's digits.
      const ids = (k[i]!.request_id ?? '').length - (d[i]!.request_id ?? '').length;
      assert.equal(k[i]!.request_bytes - d[i]!.request_bytes - ids, kept, `${conversation} round ${i + 1}`);
      if (k[i]!.reasoning_chars > 0) kept += ',"reasoning_content":""'.length + k[i]!.reasoning_chars;
    }
    assert.ok(kept > 0);
  }
  const off = await records(t, 'keep', '{extra_body: {chat_template_kwargs: {thinking: false}}}');
  assert.ok(
    off.every((r) => r.reasoning_tokens === 0 && r.reasoning_ms === null && r.ttfc_ms === r.ttft_ms),
    'thinking off: no reasoning at all',
  );
});
