// The engine's known log lines in a probe's output (issue 22): SGLang's inflight watchdog, the bootstrap
// timeout and a KV transfer given up, each found once and told in plain words; other lines ignored.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { probeRead } from '../../src/analysis/diagnosis/engine-log.js';

test("a probe's output yields SGLang's watchdog and timeout lines with their meaning, once each", () => {
  const stdout = [
    '[2026-12-04 01:23:30 TP0] Prefill batch. #new-seq: 1, #new-token: 512',
    "[2026-12-04 01:23:34 TP0] WARNING: Prefill inflight request timed out: req.rid='a1' req.bootstrap_room=7 has been in KVPoll.Transferring for 10.0s; force-failing it (SGLANG_DSV4_PREFILL_INFLIGHT_TIMEOUT=10)",
    "[2026-12-04 01:23:34 TP0] WARNING: Prefill inflight request timed out: req.rid='a2' req.bootstrap_room=8 has been in KVPoll.Transferring for 10.0s; force-failing it (SGLANG_DSV4_PREFILL_INFLIGHT_TIMEOUT=10)",
    "[2026-12-04 01:23:35 TP0] Prefill bootstrap failed for request rank=0 req.rid='b1' req.bootstrap_room=9 with exception KVTransferError(bootstrap_room=9): Request 9 timed out after 300.0s in KVPoll.Bootstrapping",
  ].join('\n');
  const read = probeRead({ run_ms: 1234, name: 'logs', stdout, stderr: '' });
  assert.equal(read.lines.length, 2);
  assert.match(read.lines[0]!.meaning, /inflight watchdog \(SGLANG_DSV4_PREFILL_INFLIGHT_TIMEOUT\)/);
  assert.match(read.lines[0]!.text, /req\.rid='a1'/);
  assert.match(read.lines[1]!.meaning, /bootstrap timeout \(SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT\)/);
  assert.equal(read.lines[1]!.run_ms, 1234);
  assert.deepEqual(probeRead({ run_ms: 0, name: 'logs', stdout: 'all quiet\n', stderr: 'grep: no match' }).lines, []);
});
