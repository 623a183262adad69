// Long healthy answers, counted as they stream (issue 26): before any request has ended, every request's
// first token is announced (live TTFT) and the client samples carry a growing count of streamed tokens
// (live tok/s), on the main thread and on worker threads alike, never more than the tokens sent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import type { ClientSampleEvent, RunEvent } from '../../src/types/index.js';
import { tempDir } from '../helpers/tmp.js';

for (const workers of [1, 2]) {
  test(`${workers} client thread${workers === 1 ? '' : 's'}: first tokens and a growing streamed-token count while four 1,500-token answers stream`, async (t) => {
    const workload = parseWorkload(
      `name: live-tokens
agents: {count: 4, rounds: 1, think_time_ms: 0, workers: ${workers}}
conversation: {tools: none, system_prompt_tokens: 20, first_user_tokens: 10, max_tokens: 2000}
engine: {topology: single, decode_step_ms: 2, output_tokens_min: 1500, output_tokens_max: 1500}
`,
      'live.yaml',
    );
    const events: RunEvent[] = [];
    const result = await executeRun({ workload, out: join(tempDir(t), 'run'), onEvent: (e) => events.push(e) });
    assert.equal(result.summary.totals.ok, 4);
    const firstEnd = events.findIndex((e) => e.kind === 'request');
    const before = events.slice(0, firstEnd);
    const firsts = before.filter((e) => e.kind === 'first_token');
    assert.deepEqual(firsts.map((e) => e.agent).sort(), [0, 1, 2, 3], 'every first token announced before any answer ended');
    const live = before.filter((e): e is ClientSampleEvent => e.kind === 'client_sample' && e.streamed_tokens !== undefined);
    assert.ok(live.length >= 1, 'a client sample while the answers streamed');
    const counts = (samples: readonly RunEvent[]): number => {
      const last = new Map<number, number>();
      for (const e of samples) if (e.kind === 'client_sample' && e.streamed_tokens !== undefined) last.set(e.thread ?? -1, e.streamed_tokens);
      return [...last.values()].reduce((a, b) => a + b, 0);
    };
    const mid = counts(live);
    assert.ok(mid > 100, `tokens counted while streaming: ${mid}`);
    // Each thread's last count: the token events its streams received by then, at most 4 × (1,500 answer
    // tokens + up to 32 reasoning tokens the engine adds), one token an event.
    const total = counts(events);
    assert.ok(total >= mid && total <= 4 * 1532, `${mid} while streaming, ${total} at the last sample`);
    // A thread's count only grows.
    const byThread = new Map<number, number>();
    for (const e of events) {
      if (e.kind !== 'client_sample' || e.streamed_tokens === undefined) continue;
      assert.ok(e.streamed_tokens >= (byThread.get(e.thread ?? -1) ?? 0));
      byThread.set(e.thread ?? -1, e.streamed_tokens);
    }
  });
}
