import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseWorkload, type Overrides } from '../../src/config/index.js';
import { WorkloadError, type WorkloadIssue } from '../../src/errors.js';

const FILE = 'w.yaml';

function issuesOf(text: string, overrides: Overrides): readonly WorkloadIssue[] {
  try {
    parseWorkload(text, FILE, overrides);
  } catch (error) {
    assert.ok(error instanceof WorkloadError, `expected a WorkloadError, got ${String(error)}`);
    return error.issues;
  }
  assert.fail('expected the overrides to be rejected');
}

describe('--set and the shortcut overrides', () => {
  it('--set reads a number, a string, a bool and a flow list as YAML', () => {
    const w = parseWorkload('', FILE, {
      set: ['agents.count=8', 'conversation.tools=none', 'conversation.include_usage=false', 'target.url=https://x.example:8443/v1'],
    });
    assert.equal(w.agents.count, 8);
    assert.equal(w.conversation.tools, 'none');
    assert.equal(w.conversation.include_usage, false);
    assert.equal(w.target.url, 'https://x.example:8443/v1');

    const tools = parseWorkload('', FILE, { set: ['conversation.tools=[{name: read_file}, {name: grep, description: search}]'] }).conversation.tools;
    assert.ok(Array.isArray(tools));
    assert.deepEqual(
      tools.map((t) => [t.name, t.description]),
      [
        ['read_file', ''],
        ['grep', 'search'],
      ],
    );
  });

  it('--set overrides what the file says and fills an empty section', () => {
    assert.equal(parseWorkload('agents:\n  count: 2\n', FILE, { set: ['agents.count=3'] }).agents.count, 3);
    assert.equal(parseWorkload('agents:\n', FILE, { set: ['agents.count=3'] }).agents.count, 3);
  });

  it('a flow list where a number belongs is reported at the --set flag', () => {
    assert.deepEqual(issuesOf('', { set: ['agents.count=[64,96]'] }), [{ where: '--set agents.count', field: 'agents.count', message: 'expected a number, got a list' }]);
  });

  it('an invalid --set value is reported at the flag, not in the file', () => {
    assert.deepEqual(issuesOf('agents:\n  count: 2\n', { set: ['agents.count=four'] }), [{ where: '--set agents.count', field: 'agents.count', message: 'expected a number, got string "four"' }]);
  });

  it('an unknown key introduced by --set is reported at the flag with a suggestion', () => {
    assert.deepEqual(issuesOf('', { set: ['agents.rouns=3'] }), [{ where: '--set agents.rouns', field: 'agents.rouns', message: 'unknown key "rouns" (did you mean "rounds"?)' }]);
    assert.deepEqual(issuesOf('', { set: ['agentz.count=3'] }), [{ where: '--set agentz.count', field: 'agentz', message: 'unknown key "agentz" (did you mean "agents"?)' }]);
  });

  it('file errors and override errors are reported together, each at its own place', () => {
    const issues = issuesOf('agents:\n  rouns: 3\n', { set: ['agents.count=0'] });
    assert.deepEqual(
      issues.map((i) => i.where),
      [`${FILE}:2:3`, '--set agents.count'],
    );
  });

  it('a malformed --set (no "=", empty path, empty segment) is a WorkloadError', () => {
    for (const entry of ['agents.count', '=3', 'agents..count=3', '.agents=3']) {
      const issues = issuesOf('', { set: [entry] });
      assert.equal(issues.length, 1, entry);
      assert.equal(issues[0]?.where, `--set ${entry}`);
      assert.match(issues[0]?.message ?? '', /expected path=value/);
    }
  });

  it('a --set value that is not valid YAML says to quote it', () => {
    const [issue] = issuesOf('', { set: ['name=[oops'] });
    assert.equal(issue?.where, '--set name');
    assert.match(issue?.message ?? '', /not valid YAML.*quote it/);
  });

  it('setting below a scalar is a clear error naming the scalar', () => {
    assert.deepEqual(issuesOf('agents:\n  count: 2\n', { set: ['agents.count.max=3'] }), [
      { where: '--set agents.count.max', field: 'agents.count.max', message: 'cannot set agents.count.max: agents.count is a number (2), not a mapping' },
    ]);
  });

  it('a __proto__ path segment becomes an unknown key, never a prototype change', () => {
    const issues = issuesOf('', { set: ['agents.__proto__.polluted=1'] });
    assert.equal(issues[0]?.field, 'agents.__proto__');
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  });

  it('--agents, --rounds, --target and --label set their fields over the file', () => {
    const w = parseWorkload('agents:\n  count: 2\nlabels:\n  arm: a\n  team: infra\n', FILE, {
      agents: 64,
      rounds: 12,
      target: 'http://127.0.0.1:30000',
      labels: ['arm=baseline', 'note=a=b', 'team.sub=x'],
    });
    assert.equal(w.agents.count, 64);
    assert.equal(w.agents.rounds, 12);
    assert.equal(w.target.url, 'http://127.0.0.1:30000');
    assert.deepEqual(w.labels, { arm: 'baseline', team: 'infra', note: 'a=b', 'team.sub': 'x' });
  });

  it('a flag and a --set saying different things for one field are refused at the flag, naming both; saying the same, accepted', () => {
    assert.deepEqual(issuesOf('', { set: ['agents.count=2'], agents: 64 }), [
      { where: '--agents', field: 'agents.count', message: '--agents and --set agents.count both set agents.count (64 and 2); give one of them' },
    ]);
    assert.equal(parseWorkload('', FILE, { set: ['agents.count=64'], agents: 64 }).agents.count, 64);
    const flags = [{ flag: '--metrics-port', path: ['client_metrics', 'port'], value: 9100 }];
    assert.deepEqual(issuesOf('', { set: ['client_metrics={port: 9200}'], flags }), [
      { where: '--metrics-port', field: 'client_metrics.port', message: '--metrics-port and --set client_metrics both set client_metrics.port (9100 and 9200); give one of them' },
    ]);
    assert.equal(parseWorkload('', FILE, { set: ['client_metrics={port: 9100, linger_s: 5}'], flags }).client_metrics.linger_s, 5);
  });

  it('a --set inside the field a flag sets is kept inside it: --via hop with the hop faults by --set runs the faults', () => {
    const via = [{ flag: '--via', path: ['target', 'via'], value: { kind: 'hop' } }];
    const w = parseWorkload('target:\n  url: http://127.0.0.1:1\n', FILE, { set: ['target.via.faults=[{kind: stall, after_requests: 3}]'], flags: via });
    assert.deepEqual(w.target.via, { kind: 'hop', faults: [{ kind: 'stall', after_requests: 3 }] });
    const conflict = issuesOf('target:\n  url: http://127.0.0.1:1\n', { set: ['target.via.kind=connect'], flags: via }).filter((i) => i.where === '--via');
    assert.deepEqual(conflict, [{ where: '--via', field: 'target.via', message: '--via and --set target.via.kind both set target.via.kind ("hop" and "connect"); give one of them' }]);
  });

  it('a flag whose value the schema refuses is reported under the flag, never as a --set nobody typed', () => {
    assert.deepEqual(issuesOf('', { flags: [{ flag: '--metrics-linger', path: ['client_metrics', 'linger_s'], value: 600 }] }), [
      { where: '--metrics-linger', field: 'client_metrics.linger_s', message: 'must be at most 300, got number 600' },
    ]);
  });

  it('a bad shortcut value is reported at its flag', () => {
    assert.deepEqual(issuesOf('', { agents: 0 }), [{ where: '--agents', field: 'agents.count', message: 'must be at least 1, got number 0' }]);
    assert.deepEqual(issuesOf('', { rounds: Number.NaN }), [{ where: '--rounds', field: 'agents.rounds', message: 'expected a number, got number NaN' }]);
    assert.deepEqual(issuesOf('', { target: 'localhost:30000' }), [{ where: '--target', field: 'target.url', message: 'must be an http:// or https:// URL, got string "localhost:30000"' }]);
    assert.deepEqual(issuesOf('', { labels: ['novalue'] }), [{ where: '--label novalue', field: 'labels', message: 'expected key=value, e.g. --label arm=baseline' }]);
  });

  it('overrides never mutate anything shared: the same inputs twice give equal, independent results', () => {
    const text = 'agents:\n  count: 2\nlabels:\n  arm: a\n';
    const overrides: Overrides = { set: ['agents.rounds=3', 'conversation.tools=[{name: t}]'], labels: ['arm=b'], agents: 5 };
    const snapshot = structuredClone(overrides);
    const first = parseWorkload(text, FILE, overrides);
    const second = parseWorkload(text, FILE, overrides);
    assert.deepEqual(first, second);
    assert.notEqual(first, second);
    assert.notEqual(first.labels, second.labels);
    assert.deepEqual(overrides, snapshot);
    // And the same file without overrides is unaffected by the earlier calls.
    const plain = parseWorkload(text, FILE);
    assert.equal(plain.agents.count, 2);
    assert.equal(plain.agents.rounds, 8);
    assert.deepEqual(plain.labels, { arm: 'a' });
  });
});
