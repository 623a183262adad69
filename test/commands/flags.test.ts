import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as flag from '../../src/commands/flags.js';
import { runFlagOverrides } from '../../src/commands/run.js';
import { parseWorkload } from '../../src/config/index.js';
import { UsageError } from '../../src/errors.js';

const refused = (fn: () => unknown, message: string): void => {
  assert.throws(fn, (e: unknown) => e instanceof UsageError && e.exitCode === 2 && e.message === message);
};

test('each kind of flag value is read one way, its bounds included and refused past them', () => {
  assert.equal(flag.wholeNumber('--k', '1', 1, 20), 1);
  assert.equal(flag.wholeNumber('--k', '20', 1, 20), 20);
  refused(() => flag.wholeNumber('--k', '21', 1, 20), '--k must be a whole number from 1 to 20, got "21"');
  refused(() => flag.wholeNumber('--agents', '1e3', 1), '--agents must be a whole number ≥ 1, got "1e3"');
  assert.equal(flag.port('--port', '0'), 0);
  assert.equal(flag.port('--port', '65535'), 65535);
  refused(() => flag.port('--port', '65536'), '--port must be a port number from 0 to 65535 (0 picks a free one), got "65536"');
  refused(() => flag.port('--port', ''), '--port must be a port number from 0 to 65535 (0 picks a free one), got ""');
  assert.equal(flag.number('--min-effect', '100', { above: 0, atMost: 100 }), 100);
  refused(() => flag.number('--min-effect', '0', { above: 0, atMost: 100 }), '--min-effect must be a number above 0 and at most 100, got "0"');
  assert.equal(flag.number('--think-ms', '0', { atLeast: 0 }), 0);
  refused(() => flag.number('--think-ms', '-1', { atLeast: 0 }), '--think-ms must be a number at least 0, got "-1"');
  assert.equal(flag.duration('--max-idle', '2s', 2000), 2000);
  refused(() => flag.duration('--max-idle', '1999ms', 2000), '--max-idle must be at least 2 s, got "1999ms"');
  refused(() => flag.duration('--max-time', '0', 1), '--max-time must be longer than 0, got "0"');
  assert.equal(flag.httpUrl('--upstream', 'https://x:1/v1').port, '1');
  refused(() => flag.httpUrl('--upstream', 'ftp://x'), '--upstream must be an http:// or https:// URL, got "ftp://x"');
  assert.equal(flag.oneOf('--topology', 'single', ['pd', 'single']), 'single');
  refused(() => flag.oneOf('--fail-on', 'better', ['worse']), '--fail-on must be "worse", got "better"');
});

test("run's flags are typed overrides of their fields: --via hop keeps the hop faults a --set gives", () => {
  const flags = runFlagOverrides({ label: [], set: [], via: 'hop', metricsPort: '9100', metricsLinger: '15s', duration: '30m' });
  assert.deepEqual(
    flags.map((f) => [f.flag, f.path.join('.'), f.value]),
    [
      ['--duration', 'duration', '30m'],
      ['--metrics-port', 'client_metrics.port', 9100],
      ['--metrics-linger', 'client_metrics.linger_s', 15],
      ['--via', 'target.via', { kind: 'hop' }],
    ],
  );
  const w = parseWorkload('target:\n  url: http://127.0.0.1:1\n', 'w.yaml', { set: ['target.via.faults=[{kind: stall, after_requests: 3}]'], flags });
  assert.deepEqual(w.target.via, { kind: 'hop', faults: [{ kind: 'stall', after_requests: 3 }] });
  assert.equal(w.client_metrics.port, 9100);
});
