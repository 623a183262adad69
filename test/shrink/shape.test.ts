// A shrink's predicate and variant shapes: what counts as failing, how a shape changes a workload, and that
// the shrunk workload written as YAML loads back as the same workload.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseWorkload, workloadToYaml } from '../../src/config/index.js';
import { applyShape, failureOf, figuresOf, shapeOf } from '../../src/shrink/index.js';
import { judgeTry } from '../../src/shrink/predicate.js';

const BASE = parseWorkload(
  `name: w
target: {via: {kind: hop, faults: [{kind: stall, after_requests: 6}]}}
agents: {count: 4, rounds: 12, think_time_ms: 20}
conversation: {system_prompt_tokens: 1000, first_user_tokens: 3, tool_result_tokens: 150, tool_result_growth_tokens: 50}
`,
  'w.yaml',
);

test('the failure kept is any hang; with no hang, the most frequent error class; nothing failed: null', () => {
  assert.deepEqual(failureOf({ hangs: 2, errorsByClass: { http_5xx: 9 } }), { kind: 'hang' });
  assert.deepEqual(failureOf({ hangs: 0, errorsByClass: { http_5xx: 2, connection_reset: 5 } }), { kind: 'error', errorClass: 'connection_reset' });
  assert.equal(failureOf({ hangs: 0, errorsByClass: {} }), null);
});

test('a try fails only with the same class of error, and says the earliest round it failed in', () => {
  const failure = { kind: 'error', errorClass: 'connection_reset' } as const;
  assert.deepEqual(judgeTry(failure, { hangs: 1, errorsByClass: { http_5xx: 3 }, hangRounds: [2], errorRounds: [4, 6] }), { fails: false, firstRound: null });
  assert.deepEqual(judgeTry(failure, { hangs: 0, errorsByClass: { connection_reset: 1 }, hangRounds: [], errorRounds: [6, 4] }), { fails: true, firstRound: 4 });
});

test("a summary's hung rounds are the rounds the predicate reads", () => {
  const round = (n: number, hangs: number, errors: number) => ({ round: n, hangs, errors });
  const figures = figuresOf({
    totals: { hangs: 2 },
    errors_by_class: { http_5xx: 1 },
    phases: [{ rounds: [round(1, 0, 0), round(7, 2, 0), round(9, 0, 1)] }],
  } as unknown as Parameters<typeof figuresOf>[0]);
  assert.deepEqual(figures, { hangs: 2, errorsByClass: { http_5xx: 1 }, hangRounds: [7], errorRounds: [9] });
});

test('a shape changes agents, rounds, context (never below the least allowed), think time, connection and path; the base is untouched', () => {
  const shrunk = applyShape(BASE, { agents: 1, rounds: 7, contextDivisor: 8, thinkTimeMs: 0, oneConnection: true, direct: true });
  assert.equal(shrunk.agents.count, 1);
  assert.equal(shrunk.agents.rounds, 7);
  assert.equal(shrunk.agents.think_time_ms, 0);
  assert.equal(shrunk.agents.connection, 'pool');
  assert.equal(shrunk.agents.pool_connections, 1);
  assert.equal(shrunk.target.via, null);
  const c = shrunk.conversation;
  assert.deepEqual([c.system_prompt_tokens, c.first_user_tokens, c.tool_result_tokens, c.tool_result_growth_tokens, c.user_turn_tokens], [125, 1, 18, 6, 7]);
  assert.equal(BASE.agents.count, 4);
  assert.deepEqual(shapeOf(BASE), { agents: 4, rounds: 12, contextDivisor: 1, thinkTimeMs: 20, oneConnection: false, direct: false });
});

test('the shrunk workload as YAML has its header, only what differs from the defaults, and loads back the same', () => {
  const shrunk = applyShape(BASE, { agents: 1, rounds: 7, contextDivisor: 4, thinkTimeMs: 0, oneConnection: false, direct: false });
  const text = workloadToYaml(shrunk, ['removed: agents 4 → 1', '', 'kept: via hop']);
  assert.match(text, /^# removed: agents 4 → 1\n#\n# kept: via hop\nname: w\ntarget:\n {2}via:\n/);
  assert.match(text, /agents:\n {2}count: 1\n {2}rounds: 7\n {2}think_time_ms: 0\n/);
  assert.doesNotMatch(text, /max_tokens|watchdog|monitor/, 'defaults are left out');
  assert.deepEqual(parseWorkload(text, 'shrunk.yaml'), shrunk);
});
