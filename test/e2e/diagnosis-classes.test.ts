// Issue 41's classes of evidence on real parts (the embedded engine as its own process, the built-in hop, real
// nginx and HAProxy, the run in this process): canary latency (a proxied leg many times slower than the
// direct one is the proxy; the direct leg slowed against its own past is the engine, slow for everyone),
// request features (every failed request larger than the completed ones, whose TTFT climbs with their size:
// the engine slow for long prompts, however fast its canaries), and the client's own lateness as a discount
// (the client's loop blocked for a second in the middle of a proxy's fault explains a share of the hangs, not
// the episode). Each scenario once in `npm test`, REPEATS times (3) in `npm run test:repeat`.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Summary } from '../../src/analysis/index.js';
import { tempDir } from '../helpers/tmp.js';
import { realPartsWorkload, runWithActs, showDiagnosis, stalledClient, throttle, why, type RealPartsSpec, type RunOptions } from '../helpers/real-parts.js';
import { requireTool, spawnEngine, startHaproxy, startNginx } from '../helpers/procs.js';
import { REPEATS, TIMES } from '../helpers/repeats.js';

/** A fast single server: short answers, quick steps. */
const FAST = { topology: 'single', decode_step_ms: 5, output_tokens_min: 12, output_tokens_max: 20, stats_interval_steps: 0 };

const tlsProxy = (url: string): string => `{kind: tls-proxy, url: "${url}"}`;

async function run(t: TestContext, spec: RealPartsSpec, options: RunOptions = {}): Promise<Summary> {
  const dir = join(tempDir(t), 'run');
  const summary = await runWithActs(realPartsWorkload('classes', spec), dir, options);
  showDiagnosis(t, summary, dir);
  return summary;
}

/** Every sentence the run's episodes weighed or stated. */
function sentences(s: Summary): string {
  return (s.diagnosis.episodes ?? []).flatMap((e) => [...e.evidence_for, ...e.evidence_against, ...e.facts]).join('\n');
}

test(`canary latency: the built-in hop holding every request 0.9-1.4 s (past the 800 ms headers deadline), its canaries answered slowly, the engine fast: proxy, naming the proxied leg's latency, ${TIMES}`, async (t) => {
  const engine = await spawnEngine(t, FAST);
  for (let i = 0; i < REPEATS; i += 1) {
    // Canaries every 0.75 s with a 3 s timeout: the two a leg may have out at once cover the hop's delay, so
    // the proxied leg answers every canary, slowly — latency, not failures, is the evidence here. Every agent
    // request hangs from the first: the proxied leg is measured against the direct one, with no past of its own.
    const summary = await run(t, {
      engine,
      via: '{kind: hop, faults: [{kind: latency, ms: 900, jitter_ms: 500}]}',
      duration: '5s',
      canary: { interval_s: 0.75, timeout_ms: 3000 },
    });
    assert.ok(summary.totals.hangs > 0, `repeat ${i}: the hop's delay made hangs: ${JSON.stringify(summary.totals)}`);
    assert.equal(summary.diagnosis.verdict, 'proxy', `repeat ${i}: ${why(summary)}`);
    assert.ok((summary.diagnosis.confidence ?? 0) >= 0.6, `repeat ${i}: ${why(summary)}`);
    assert.match(
      sentences(summary),
      /proxied canaries took \d.* over the episode, direct ones \d+ ms.*\(the proxied leg \d+\.\d× slower than the direct one, with no canaries before the episode to give its usual margin; Welch t on log latency/,
      `repeat ${i}: ${why(summary)}`,
    );
  }
});

test(`canary latency, the mirror: the engine throttled behind HAProxy (slow for everyone, the direct leg many times slower than before): engine or engine_overloaded, never proxy, naming the direct leg's latency, ${TIMES}`, async (t) => {
  const haproxy = requireTool(t, 'haproxy', 'apt-get install haproxy');
  if (haproxy === null) return;
  const engine = await spawnEngine(t, FAST);
  const proxy = await startHaproxy(t, haproxy, engine.port);
  for (let i = 0; i < REPEATS; i += 1) {
    const summary = await run(
      t,
      // Canaries every 250 ms, four a leg out at once, 2 s to answer: a slowed leg answers rather than
      // filling its slots, and the episode holds a dozen a leg, enough to measure a latency that varies
      // with where in the pause each one lands.
      { engine, via: tlsProxy(proxy.url), duration: '6s', canary: { interval_s: 0.25, timeout_ms: 2000 }, set: ['monitor.canary_concurrency=4'] },
      { acts: throttle(engine, 2000, 3000) },
    );
    assert.ok(summary.totals.hangs + summary.totals.errors > 0, `repeat ${i}: the throttled engine made failures: ${JSON.stringify(summary.totals)}`);
    assert.ok(summary.diagnosis.verdict === 'engine' || summary.diagnosis.verdict === 'engine_overloaded', `repeat ${i}: ${why(summary)}`);
    assert.ok((summary.diagnosis.confidence ?? 0) >= 0.5, `repeat ${i}: ${why(summary)}`);
    assert.ok(
      (summary.diagnosis.episodes ?? []).every((e) => e.verdict !== 'proxy'),
      `repeat ${i}: ${why(summary)}`,
    );
    assert.match(sentences(summary), /direct canaries \(skipping the proxy\) took \d.* over the episode against \d+ ms before it/, `repeat ${i}: ${why(summary)}`);
  }
});

test(`request features: the engine's prefill 800 ms per 1k uncached tokens while every answer is a tool call whose result grows by 300 tokens a round, behind nginx (completed TTFT climbing with size, the later rounds past the first-token deadline): engine, naming the size that separates the failures and the TTFT trend reaching the deadline, ${TIMES}`, async (t) => {
  const nginx = requireTool(t, 'nginx', 'apt-get install nginx');
  if (nginx === null) return;
  // Every answer a tool call (room for it in max_tokens), so each round's prompt is larger than the last by a
  // tool result and the uncached part the engine prefills climbs with it: rounds 1-4 complete in 0.1-0.9 s,
  // round 5 (about 14 KB) needs more than the 1 s first-token deadline, and its re-sends too. Two agents: with
  // more, their prefills queue behind each other and the round, not the size, is what separates (overload).
  // Started 400 ms apart: two first rounds in one prefill batch pay both uncached system prompts (0.5 s at
  // 2 KB, a cold point that flattens the trend of the eight or so completions).
  const set = [
    'agents.count=2',
    'agents.think_time_ms=300',
    'agents.start_stagger_ms=400',
    'conversation.max_tokens=96',
    'conversation.tool_result_tokens=100',
    'conversation.tool_result_growth_tokens=300',
    'conversation.max_context_tokens=6000',
  ];
  for (let i = 0; i < REPEATS; i += 1) {
    // A fresh engine each time: the prefills of a run's hung requests go on after it ends (as a server's do),
    // and a next run on the same engine would queue behind them from its first request.
    const engine = await spawnEngine(t, { ...FAST, decode_step_ms: 2, prefill_ms_per_1k_tokens: 800, tool_call_ratio: 1 });
    const proxy = await startNginx(t, nginx, engine.port, { buffering: false });
    const summary = await run(t, { engine, via: tlsProxy(proxy.url), duration: '6s', set });
    await proxy.stop();
    await engine.stop();
    assert.ok(summary.totals.ok > 0 && summary.totals.hangs > 0, `repeat ${i}: some complete, the larger hang: ${JSON.stringify(summary.totals)}`);
    assert.ok(summary.diagnosis.verdict === 'engine' || summary.diagnosis.verdict === 'engine_overloaded', `repeat ${i}: ${why(summary)}`);
    assert.ok((summary.diagnosis.confidence ?? 0) >= 0.5, `repeat ${i}: ${why(summary)}`);
    assert.match(
      sentences(summary),
      /the (request body size \(bytes\)|prompt tokens) separates the \d+ failed requests from \d+ completed ones: median \d+ against \d+, the failed larger in \d+% of pairs .*completed requests' TTFT climbs with it \(\d+\.\d+ ms per 1,000, t = \d+\.\d\), which predicts .* against their 1\.0 s deadline: the engine was slow for long prompts/,
      `repeat ${i}: ${why(summary)}`,
    );
  }
});

test(`client lateness as a discount: the hop buffering whole answers past the first-token deadline while the client's own loop is blocked 1.2 s mid-episode: proxy, the lateness explaining a share of the hangs, ${TIMES}`, async (t) => {
  const engine = await spawnEngine(t, { ...FAST, decode_step_ms: 100 });
  for (let i = 0; i < REPEATS; i += 1) {
    const client = stalledClient();
    // Answers of 12-20 tokens at 100 ms a step: 1.2-2 s each, held whole by the hop past the 1 s first-token
    // deadline. Two seconds in, the client's own loop blocked for 1.2 s (the hangs then are its own too).
    const summary = await run(t, { engine, via: '{kind: hop, faults: [{kind: buffer}]}', duration: '6s' }, { acts: [[2000, () => client.stall(1200)]], clientSample: client.sample });
    assert.equal(client.stalls, 1, `repeat ${i}: the client stalled once`);
    assert.equal(summary.diagnosis.verdict, 'proxy', `repeat ${i}: ${why(summary)}`);
    assert.ok((summary.diagnosis.confidence ?? 0) >= 0.6, `repeat ${i}: ${why(summary)}`);
    const said = sentences(summary);
    // The lateness is named as explaining a share: in the undelivered answers' vote, and against the client.
    const share = /answers were made and never delivered .*\(the client's own delay explains (\d+) of (\d+) hangs: weighed 0\.\d+ of 3 bits\)/.exec(said);
    assert.ok(share !== null && Number(share[1]) > 0 && 2 * Number(share[1]) < Number(share[2]), `repeat ${i}: ${why(summary)}`);
    assert.match(said, /the client's event loop ran at most 1\.\d s late over the episode .*it explains \d+ of \d+ hangs, not the episode/, `repeat ${i}: ${why(summary)}`);
  }
});
