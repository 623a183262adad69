// The monitor service on a fake bus and fake time: which targets it scrapes, bursts on a hang and on a
// request past monitor.burst.latency_ms (not on one that ends in time), and a burst cut short by the run's end.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseWorkload } from '../../src/config/index.js';
import { MonitorService, monitorTargets, type FetchText } from '../../src/monitor/index.js';
import { RunBus } from '../../src/run/index.js';
import { FakeClock } from '../../src/watchdog/index.js';
import type { BurstEvent, RequestRecord, RunEvent } from '../../src/types/index.js';

const flush = (): Promise<void> => new Promise((r) => setImmediate(r));
async function advance(clock: FakeClock, ms: number): Promise<void> {
  for (let done = 0; done < ms; done += 10) {
    clock.advance(10);
    await flush();
  }
}

function start(yaml: string) {
  const clock = new FakeClock();
  const bus = new RunBus();
  const events: RunEvent[] = [];
  bus.onAny((e) => events.push(e));
  const fetch: FetchText = () => Promise.resolve({ status: 200, body: 'sglang:num_running_reqs{model_name="m"} 1\n' });
  const service = new MonitorService({ clock, fetch });
  const workload = parseWorkload(yaml, 'w.yaml');
  service.start({ workload, dir: '/tmp/x', bus, runStartMs: 0, engineUrl: 'http://127.0.0.1:1', log: () => {} });
  return { clock, bus, events, service, bursts: () => events.filter((e): e is BurstEvent => e.kind === 'burst') };
}

const record = (agent: number): RequestRecord => ({ agent, conversation: `a${agent}-c1`, round: 2, run_ms: 0, e2e_ms: 10, status: 'ok' }) as unknown as RequestRecord;

describe('monitor service', () => {
  it('scrapes the named targets, else the embedded engine, else nothing', () => {
    const m = (yaml: string) => parseWorkload(yaml, 'w.yaml').monitor;
    assert.deepEqual(monitorTargets(m(''), 'http://127.0.0.1:5000'), [{ name: 'engine', url: 'http://127.0.0.1:5000/metrics' }]);
    assert.deepEqual(monitorTargets(m(''), null), [], 'a target of your own is not assumed to have /metrics');
    assert.deepEqual(monitorTargets(m('monitor: {targets: [{name: p, url: "http://p:1"}]}'), 'http://127.0.0.1:5000'), [{ name: 'p', url: 'http://p:1' }]);
    assert.deepEqual(monitorTargets(m('monitor: {enabled: false}'), 'http://127.0.0.1:5000'), []);
  });

  it('a request in flight past burst.latency_ms starts a burst; one that ends in time does not', async () => {
    const h = start('monitor: {interval_ms: 1000, burst: {latency_ms: 500, duration_s: 1}}');
    h.bus.emit({ kind: 'request_start', agent: 0, conversation: 'a0-c1', round: 1, run_ms: 0 });
    await advance(h.clock, 300);
    h.bus.emit({ kind: 'request', record: record(0) });
    await advance(h.clock, 400);
    assert.equal(h.bursts().length, 0, 'ended in time');
    h.bus.emit({ kind: 'request_start', agent: 1, conversation: 'a1-c1', round: 2, run_ms: 700 });
    await advance(h.clock, 600);
    assert.deepEqual(
      h.bursts().map((b) => [b.state, b.reason, b.trigger?.agent]),
      [['start', 'latency', 1]],
    );
    assert.equal(h.bursts()[0]!.run_ms, 1200);
    await advance(h.clock, 1100);
    assert.deepEqual(
      h.bursts().map((b) => b.state),
      ['start', 'end'],
    );
    const stopping = h.service.stop();
    await advance(h.clock, 100);
    await stopping;
  });

  it('a hang bursts at once; the run ending mid-burst ends the burst', async () => {
    const h = start('monitor: {interval_ms: 1000, burst: {duration_s: 15}}');
    await advance(h.clock, 250);
    h.bus.emit({ kind: 'hang', t: '', run_ms: 250, record: record(3) });
    await advance(h.clock, 500);
    const scrapes = h.events.filter((e) => e.kind === 'scrape');
    assert.deepEqual(
      scrapes.map((s) => [s.run_ms, s.burst]),
      [
        [0, false],
        [250, true],
        [350, true],
        [450, true],
        [550, true],
        [650, true],
        [750, true],
      ],
    );
    const stopping = h.service.stop();
    await advance(h.clock, 100);
    await stopping;
    assert.deepEqual(
      h.bursts().map((b) => [b.state, b.run_ms]),
      [
        ['start', 250],
        ['end', 750],
      ],
    );
  });
});
