import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { runCommand } from '../../src/commands/run.js';
import { parseWorkload } from '../../src/config/index.js';
import { UsageError, WorkloadError } from '../../src/errors.js';
import { tempDir } from '../helpers/tmp.js';

test('client_metrics defaults: no endpoint, loopback, no linger, no push, a 10 s push timeout, a push every 10 s', () => {
  assert.deepEqual(parseWorkload('name: m\n', 'm.yaml').client_metrics, {
    port: null,
    host: '127.0.0.1',
    linger_s: 0,
    remote_write_url: null,
    remote_write_timeout_s: 10,
    remote_write_interval_s: 10,
  });
});

test('remote_write_interval_s is bounded: under 1 s or over 600 s is a located workload error', () => {
  for (const value of ['0.5', '601']) {
    assert.throws(
      () => parseWorkload(`name: m\nclient_metrics:\n  remote_write_interval_s: ${value}\n`, 'm.yaml'),
      (e: unknown) => e instanceof WorkloadError && /m\.yaml:3:\d+\s+client_metrics\.remote_write_interval_s/.test(e.message),
    );
  }
  assert.equal(parseWorkload('name: m\nclient_metrics:\n  remote_write_interval_s: 1\n', 'm.yaml').client_metrics.remote_write_interval_s, 1);
});

test('--metrics-linger takes seconds or a duration, --remote-write an http(s) URL: anything else is exit 2 before the run starts', async (t) => {
  const out = join(tempDir(t), 'never');
  const run = (opts: Record<string, string>) => runCommand('workloads/smoke.yaml', { label: [], set: [], out, ...opts }, []);
  await assert.rejects(
    run({ metricsLinger: 'soon' }),
    (e: unknown) => e instanceof UsageError && e.exitCode === 2 && /^--metrics-linger must be a duration like 500ms, 30s/.test(e.message) && e.message.endsWith('got "soon"'),
  );
  await assert.rejects(run({ metricsLinger: '10m' }), (e: unknown) => e instanceof WorkloadError && /--metrics-linger\s+client_metrics\.linger_s/.test(e.message));
  await assert.rejects(
    run({ remoteWrite: 'prometheus:9090/api/v1/write' }),
    (e: unknown) => e instanceof WorkloadError && /--remote-write\s+client_metrics\.remote_write_url.*must be an http:\/\/ or https:\/\/ URL/s.test(e.message),
  );
  assert.equal(existsSync(out), false, 'nothing started');
});
