// The terminal's gauge section (issue 26 item 3): a series' labels are shown only where they tell series of
// the same target and gauge apart; the constant ones (engine_type, tp_rank…) stay in summary.json.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gaugeLines } from '../../src/report/gauges.js';
import type { GaugeVerdict } from '../../src/types/index.js';

function verdict(target: string, name: string, labels: Record<string, string>, kind: GaugeVerdict['verdict']): GaugeVerdict {
  return { target, name, labels, verdict: kind, samples: 20, window_s: 4, longest_nonzero_s: 0.4, dips: 3, last_value: 1, needed_s: null, evidence: ['3 dips over 4.0 s'] };
}

test('labels that are the same on every series of a gauge are left out; those that tell series apart stay', () => {
  const constant = { engine_type: 'decode', model_name: 'm', moe_ep_rank: '0', pp_rank: '0', tp_rank: '0' };
  const lines = gaugeLines([
    verdict('decode', 'sglang:num_running_reqs', constant, 'rotating'),
    verdict('decode', 'sglang:num_queue_reqs', constant, 'idle'),
    verdict('router', 'sgl_router_running_requests', { worker: 'http://127.0.0.1:1' }, 'rotating'),
    verdict('router', 'sgl_router_running_requests', { worker: 'http://127.0.0.1:2' }, 'rotating'),
  ]).join('\n');
  assert.match(lines, /decode sglang:num_running_reqs rotating/);
  assert.match(lines, /idle \(0 throughout\): decode sglang:num_queue_reqs$/m);
  assert.doesNotMatch(lines, /engine_type|tp_rank/);
  assert.match(lines, /router sgl_router_running_requests\{worker="http:\/\/127\.0\.0\.1:1"\} rotating/);
  assert.match(lines, /router sgl_router_running_requests\{worker="http:\/\/127\.0\.0\.1:2"\} rotating/);
});
