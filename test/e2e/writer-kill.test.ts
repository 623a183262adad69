import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rebuildReports } from '../../src/commands/report.js';
import { measureKillLoss } from '../../bench/writer-kill.js';

test('a run SIGKILLed mid-way has on disk every answer the server completed up to 250 ms before the kill, and its folder still reports', async () => {
  let rebuilt: { status: string; requests: number } | null = null;
  const loss = await measureKillLoss({
    inspect: async (out) => {
      const r = await rebuildReports(out);
      rebuilt = { status: r.summary.run.status, requests: r.summary.totals.requests };
    },
  });
  // The bound is 250 ms of the writer's own making; what the machine's load adds to the client (its measured
  // event-loop delay) comes on top.
  const boundMs = 250 + loss.loopDelayMaxMs;
  assert.ok(loss.serverCompleted >= 200, JSON.stringify(loss));
  assert.ok(loss.lostWindowMs <= boundMs, `lost the answers of the last ${loss.lostWindowMs} ms before the kill (bound ${boundMs} ms): ${JSON.stringify(loss)}`);
  assert.deepEqual(rebuilt, { status: 'killed', requests: loss.onDisk }, 'report counts every whole record of the killed run');
});
