import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseWorkload } from '../../src/config/index.js';
import { WorkloadError, type WorkloadIssue } from '../../src/errors.js';

const FILE = 'w.yaml';

function issuesOf(text: string, set: string[] = []): WorkloadIssue[] {
  try {
    parseWorkload(text, FILE, { set });
  } catch (error) {
    assert.ok(error instanceof WorkloadError, String(error));
    return [...error.issues];
  }
  assert.fail('expected the workload to be rejected');
}

/** `where  field  message` of each issue, for matching. */
const lines = (issues: WorkloadIssue[]): string[] => issues.map((i) => `${i.where}  ${i.field}  ${i.message}`);

test('agents.arrival takes its defaults (poisson, max_active 256) and needs a rate and a duration', () => {
  const w = parseWorkload('agents: {arrival: {rate_per_s: 4}}\nduration: 15s\n', FILE);
  assert.deepEqual(w.agents.arrival, { rate_per_s: 4, distribution: 'poisson', max_active: 256 });
  assert.equal(w.agents.stages, null);
  assert.equal(w.agents.ramp, 'step');
  const viaSet = parseWorkload('', FILE, { set: ['agents.arrival={rate_per_s: 4, distribution: constant}', 'duration=15s'] });
  assert.equal(viaSet.agents.arrival?.distribution, 'constant');
  assert.match(lines(issuesOf('agents: {arrival: {rate_per_s: 4}}\n')).join('\n'), /duration {2}agents\.arrival starts conversations for a length of time: set duration/);
  assert.match(lines(issuesOf('agents: {arrival: {distribution: poisson}}\nduration: 1m\n')).join('\n'), /w\.yaml:1:\d+ {2}agents\.arrival\.rate_per_s {2}required: conversations started per second/);
  assert.match(lines(issuesOf('agents: {arrival: {rate_per_s: 0}}\nduration: 1m\n')).join('\n'), /agents\.arrival\.rate_per_s/);
  assert.match(lines(issuesOf('agents: {arrival: {rate_per_s: 1, distribution: uniform}}\nduration: 1m\n')).join('\n'), /agents\.arrival\.distribution/);
  assert.match(lines(issuesOf('agents: {arrival: {rate_per_s: 1, max_active: 0}}\nduration: 1m\n')).join('\n'), /agents\.arrival\.max_active/);
});

test('agents.stages: every stage a rate (open loop) or every stage a count, never both; no duration or sweep beside them', () => {
  const open = parseWorkload('agents:\n  ramp: linear\n  stages:\n    - {duration: 2m, rate_per_s: 1}\n    - {duration: 5m, rate_per_s: 4}\n', FILE);
  assert.deepEqual(open.agents.stages, [
    { duration: '2m', rate_per_s: 1 },
    { duration: '5m', rate_per_s: 4 },
  ]);
  const closed = parseWorkload('agents:\n  stages: [{duration: 30s, count: 4}, {duration: 30s, count: 0}]\n', FILE);
  assert.equal(closed.agents.stages?.length, 2);
  const bad = lines(
    issuesOf(
      'agents:\n  arrival: {rate_per_s: 2}\n  stages:\n    - {duration: 10s, rate_per_s: 1}\n    - {duration: 10s, count: 3}\n    - {duration: 0s}\n    - {duration: 10s, rate_per_s: 1, count: 1}\nduration: 5s\nsweep: {agents: [1, 2]}\n',
    ),
  );
  const text = bad.join('\n');
  assert.match(text, /w\.yaml:3:3 {2}agents\.stages {2}every stage gives rate_per_s \(open loop\) or every stage gives count \(agents\); they cannot mix/);
  assert.match(text, /w\.yaml:6:7 {2}agents\.stages\.2 {2}give rate_per_s \(conversations started per second\) or count \(agents\)/);
  assert.match(text, /agents\.stages\.2\.duration {2}must be longer than 0/);
  assert.match(text, /agents\.stages\.3 {2}give either rate_per_s .* or count .*, not both/);
  assert.match(text, /agents\.arrival\.rate_per_s {2}each stage gives its own rate_per_s: remove this one/);
  assert.match(text, /duration {2}agents\.stages give the run its length/);
  assert.match(text, /agents\.stages {2}set either sweep or agents\.stages, not both/);
  assert.match(text, /agents\.arrival {2}a sweep runs levels of agents/);
  assert.match(lines(issuesOf('agents:\n  arrival: {max_active: 4}\n  stages: [{duration: 10s, count: 2}]\n')).join('\n'), /agents\.arrival {2}stages of agent counts are closed loop/);
  assert.match(lines(issuesOf('agents:\n  stages: [{duration: 10s, rate_per_s: 0}]\n')).join('\n'), /agents\.stages {2}every stage is at 0: nothing would run/);
  assert.match(lines(issuesOf('agents:\n  stages: []\n')).join('\n'), /agents\.stages/);
});

test('stages lasting more than a year and a day in all, or making too many windows, are refused; a replay takes no arrivals', () => {
  assert.match(
    lines(issuesOf('agents:\n  stages: [{duration: 200d, rate_per_s: 1}, {duration: 200d, rate_per_s: 2}]\n')).join('\n'),
    /agents\.stages {2}the stages last 400 days in all; at most 366 days/,
  );
  assert.match(lines(issuesOf('window_s: 0.1\nagents:\n  stages: [{duration: 2d, count: 1}]\n')).join('\n'), /agents\.stages {2}the stages make 1,728,000 windows of window_s 0\.1 s/);
  assert.match(
    lines(issuesOf('agents: {arrival: {rate_per_s: 1}}\nduration: 1m\nreplay: {file: x.jsonl}\n')).join('\n'),
    /agents\.arrival {2}a replay sends the recorded conversations at their recorded times/,
  );
});
