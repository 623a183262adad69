import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseAbFile, parseWorkload } from '../../src/config/index.js';
import { WorkloadError, type WorkloadIssue } from '../../src/errors.js';

const FILE = 'workloads/test.yaml';

function issuesOf(text: string, set: string[] = []): readonly WorkloadIssue[] {
  try {
    parseWorkload(text, FILE, { set });
  } catch (error) {
    assert.ok(error instanceof WorkloadError, `expected a WorkloadError, got ${String(error)}`);
    assert.equal(error.exitCode, 2);
    return error.issues;
  }
  assert.fail('expected the workload to be rejected');
}

describe('bounded values', () => {
  it('a think time past 2^31 ms is refused where it is written, not run as 1 ms', () => {
    const issues = issuesOf('agents:\n  think_time_ms: 1e12\n');
    assert.deepEqual(issues, [{ where: `${FILE}:2:18`, field: 'agents.think_time_ms', message: 'must be at most 2147483647 ms (24.8 days, the longest timer Node can set), got 1000000000000' }]);
  });

  it('every timer field is bounded, at any depth and inside lists, and 2^31 − 1 itself passes', () => {
    for (const [text, field] of [
      ['watchdog:\n  total_ms: 3000000000\n', 'watchdog.total_ms'],
      ['agents:\n  keep_alive_timeout_ms: 2147483648\n', 'agents.keep_alive_timeout_ms'],
      ['monitor:\n  burst:\n    latency_ms: 1e10\n', 'monitor.burst.latency_ms'],
      ['engine:\n  faults: [{kind: drip, interval_ms: 1e10}]\n', 'engine.faults.0.interval_ms'],
      ['target:\n  via: {kind: hop, faults: [{kind: idle_close, after_s: 1e7}]}\n', 'target.via.faults.0.after_s'],
      ['engine:\n  gauge_fault: {kind: pin, after_s: 3e6}\n', 'engine.gauge_fault.after_s'],
    ] as const) {
      const issues = issuesOf(text);
      assert.equal(issues.length, 1, `${field}: ${JSON.stringify(issues)}`);
      assert.equal(issues[0]?.field, field);
      assert.match(issues[0]?.message ?? '', /^must be at most 2147483(647 ms|\.647 s) \(24\.8 days/);
    }
    assert.equal(parseWorkload('agents:\n  think_time_ms: 2147483647\n', FILE).agents.think_time_ms, 2_147_483_647);
  });

  it('a field with a lower bound of its own reports that one only', () => {
    const issues = issuesOf('monitor:\n  pin_after_s: 1e7\n');
    assert.equal(issues.length, 1);
    assert.equal(issues[0]?.message, 'must be at most 86400, got number 10000000');
  });

  it('a run duration past 24.8 days is accepted (it runs on chunked timers), past 366 days refused', () => {
    assert.equal(parseWorkload('duration: 25d\n', FILE).duration, '25d');
    assert.equal(parseWorkload('window_s: 60\n', FILE, { set: ['duration=365d'] }).duration, '365d');
    assert.deepEqual(issuesOf('duration: 400d\n'), [{ where: `${FILE}:1:11`, field: 'duration', message: 'must be at most 366 days, got "400d"' }]);
    assert.equal(issuesOf('sweep: {agents: [2], phase_duration: 1e12}\n')[0]?.field, 'sweep.phase_duration');
  });

  it('a timed run spans at most a million windows (summary.json keeps figures for each); a bad duration is reported once', () => {
    const issues = issuesOf('window_s: 0.1\nduration: 30d\n');
    assert.deepEqual(issues, [{ where: `${FILE}:2:11`, field: 'duration', message: '30d is 25,920,000 windows of window_s 0.1 s; at most 1,000,000: raise window_s' }]);
    assert.equal(parseWorkload('window_s: 60\nduration: 300d\n', FILE).duration, '300d');
    // window_s auto gives a long run 10 s windows: 115 days at most.
    assert.equal(parseWorkload('duration: 100d\n', FILE).duration, '100d');
    assert.equal(issuesOf('duration: 200d\n')[0]?.message, '200d is 1,728,000 windows of window_s auto (10 s); at most 1,000,000: raise window_s');
    assert.equal(issuesOf('window_s: 1\nsweep: {agents: [1, 2], phase_duration: 10d}\n')[0]?.message, '10d × 2 phases is 1,728,000 windows of window_s 1 s; at most 1,000,000: raise window_s');
    assert.deepEqual(
      issuesOf('duration: soon\n').map((i) => i.message),
      ['invalid duration "soon": use a number of seconds or a duration like 500ms, 30s, 5m, 8h, 1h30m, 2d'],
    );
  });

  it('token counts are bounded at 10 M, so no value can build a string V8 cannot hold', () => {
    const issues = issuesOf('conversation:\n  system_prompt_tokens: 1e9\n');
    assert.deepEqual(issues, [{ where: `${FILE}:2:25`, field: 'conversation.system_prompt_tokens', message: 'must be at most 10,000,000 tokens, got 1000000000' }]);
    assert.equal(issuesOf('engine:\n  output_tokens_max: 2e7\n')[0]?.field, 'engine.output_tokens_max');
  });

  it('a conversation that would grow past 10 M tokens is refused at agents.rounds, unless max_context_tokens caps it', () => {
    const text = 'agents:\n  rounds: 2000\nconversation:\n  tool_result_growth_tokens: 10\n';
    const issues = issuesOf(text);
    assert.equal(issues.length, 1);
    assert.equal(issues[0]?.where, `${FILE}:2:11`);
    assert.match(issues[0]?.message ?? '', /a conversation of 2000 rounds would grow past 10,000,000 tokens.*max_context_tokens/);
    assert.equal(parseWorkload(`${text}  max_context_tokens: 32000\n`, FILE).agents.rounds, 2000);
    // The defaults and the shipped soak stay far below.
    assert.equal(parseWorkload('agents:\n  rounds: 100\n', FILE).agents.rounds, 100);
  });

  it('an echoed value is cut to 200 characters and says how long it was', () => {
    const long = 'x'.repeat(5000);
    // YAML itself caps a plain key at 1024 characters.
    for (const issue of [...issuesOf(`agents:\n  connection: "${long}"\n`), ...issuesOf(`${long.slice(0, 1000)}: 1\n`), ...issuesOf('', [`duration=${long}`])]) {
      assert.ok(issue.message.length < 450, `${issue.message.length} characters: ${issue.message.slice(0, 80)}…`);
      assert.match(issue.message, /… \((5,00\d|1,000) characters\)/);
    }
  });

  it("an ab file's own times are bounded too", async () => {
    const text = 'workload: {agents: {count: 1}}\narms:\n  - {name: a, health: {url: "http://127.0.0.1:1/h", interval_ms: 1e10}}\n  - {name: b}\n';
    await assert.rejects(parseAbFile(text, 'ab.yaml'), (error: unknown) => {
      assert.ok(error instanceof WorkloadError);
      assert.equal(error.issues[0]?.field, 'arms.0.health.interval_ms');
      assert.match(error.issues[0]?.where ?? '', /^ab\.yaml:3:\d+$/);
      return true;
    });
  });
});
