// Right verdict, right story (issue 41, class 5): the diagnosis's sentence is what people act on, so it must say
// what happened, on real parts. (a) A reverse proxy that stops answering a connection the moment an answer on
// it ends (each part its own process: the engine, and a small Node proxy written here, not roundload's), agents
// that do not think: the next request on a reused connection fails whatever the gap — told as that, never as an
// idle timeout shorter than the agents' think time. (b) One request
// pinned in the prefill's inflight queue of an engine running as its own process behind nginx while the others
// rotate through it: the floor step named is the one that request made (the first scrape after its send from
// which the queue never went below the floor), or the floor the load already held when it joined (said so),
// never a later step of the load. Each REPEATS times (3 in `npm run test:repeat`).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Summary } from '../../src/analysis/index.js';
import type { RequestRecord, ScrapeEvent } from '../../src/types/index.js';
import { readJsonl, tempDir } from '../helpers/tmp.js';
import { realPartsWorkload, runWithActs, showDiagnosis, why } from '../helpers/real-parts.js';
import { requireTool, spawnEngine, startCloser, startNginx, type EngineProc } from '../helpers/procs.js';
import { REPEATS, TIMES } from '../helpers/repeats.js';

/** A fast engine: short answers, quick steps. */
const ENGINE = { decode_step_ms: 5, output_tokens_min: 12, output_tokens_max: 20, stats_interval_steps: 0 };
const INFLIGHT = 'sglang:num_prefill_inflight_queue_reqs';

interface RunOutcome {
  summary: Summary;
  records: RequestRecord[];
  scrapes: ScrapeEvent[];
}

async function run(t: TestContext, engine: Pick<EngineProc, 'url' | 'targets'>, via: { url: string; ca: string | null }, set: string[]): Promise<RunOutcome> {
  const dir = join(tempDir(t), 'run');
  const workload = realPartsWorkload('stories', { engine, via: `{kind: tls-proxy, url: "${via.url}"}`, caFile: via.ca, set });
  const summary = await runWithActs(workload, dir, { preflight: true });
  showDiagnosis(t, summary, dir);
  return {
    summary,
    records: readJsonl<RequestRecord>(join(dir, 'requests.jsonl')),
    scrapes: readJsonl<{ kind: string }>(join(dir, 'gauges.jsonl')).filter((e): e is ScrapeEvent => e.kind === 'scrape'),
  };
}

/** Every piece of evidence the run's episodes weighed for their verdicts. */
const evidenceFor = (s: Summary): string => (s.diagnosis.episodes ?? []).flatMap((e) => e.evidence_for).join('\n');

test(`a proxy that stops answering a connection once an answer on it ended, agents not thinking: proxy, told as a close after each answer whatever the gap, ${TIMES}`, async (t) => {
  const engine = await spawnEngine(t, ENGINE, ['--topology', 'single']);
  const closer = await startCloser(t, engine.url);
  for (let i = 0; i < REPEATS; i += 1) {
    const { summary, records } = await run(t, engine, closer, ['agents.think_time_ms=0']);
    const dead = (r: RequestRecord): boolean => (r.status === 'hang' && r.hang?.phase === 'headers') || (r.status === 'error' && /keepalive_race|connection_reset/.test(r.error?.class ?? ''));
    const reused = records.filter((r) => (r.connection?.nth ?? 0) >= 2);
    const fresh = records.filter((r) => r.connection?.nth === 1);
    const failedReuses = reused.filter(dead).length;
    t.diagnostic(
      `repeat ${i}: ${summary.diagnosis.verdict} ${summary.diagnosis.confidence}: reused ${failedReuses} dead, ${reused.filter((r) => r.status === 'ok').length} ok; new ${fresh.filter(dead).length} dead, ${fresh.filter((r) => r.status === 'ok').length} ok`,
    );
    assert.ok(failedReuses >= 3, `repeat ${i}: the close met reused connections: ${why(summary)}`);
    assert.equal(summary.diagnosis.verdict, 'proxy', `repeat ${i}: ${why(summary)}`);
    const story = evidenceFor(summary);
    assert.match(story, /closed (each connection after its answer|connections after their answers) .*the next request on a reused connection failed whatever the gap/, `repeat ${i}: ${why(summary)}`);
    assert.doesNotMatch(story, /think time|an idle timeout between/, `repeat ${i}: ${why(summary)}`);
  }
});

/** The prefill's inflight queue at each scrape, in order. */
function inflightSamples(scrapes: readonly ScrapeEvent[]): { ms: number; value: number }[] {
  return scrapes
    .filter((e) => e.target === 'prefill' && e.ok)
    .flatMap((e) => e.samples.filter((x) => x.name === INFLIGHT).map((x) => ({ ms: e.run_ms, value: x.value })))
    .sort((a, b) => a.ms - b.ms);
}

test(`one request pinned in the inflight queue behind nginx while the others rotate: the step named is the one it made after its send, ${TIMES}`, async (t) => {
  const nginx = requireTool(t, 'nginx', 'apt-get install nginx');
  if (nginx === null) return;
  for (let i = 0; i < REPEATS; i += 1) {
    // As in diagnosis-real.test.ts: a fresh deployment each time (the pin fires once per engine, at round 4),
    // KV transfers of 40 ms so the scrapes see the others above the pinned one.
    const engine = await spawnEngine(t, { ...ENGINE, kv_transfer_ms: 40, faults: [{ kind: 'inflight_pin', from_round: 4, times: 1 }] });
    const proxy = await startNginx(t, nginx, engine.port, { buffering: false });
    // A first-token deadline of 3 s, not the real-parts 1 s, so a loaded machine's slow prefill never takes the
    // pinned request out before it reaches the inflight queue. Agents thinking 300 ms, not 50: a step is a step
    // only from a level seen below it, and a request sent more than a second after the floor's step is not the
    // step's (load holding the queue for seconds is the incident's steady 1, not a pin). With four agents in step
    // at 50 ms, a loaded machine's queue held ≥ 1 from the start (6, 4, 2, 1, then the pin) or from 1.2 s
    // before the send: no step to name, `rotating`, in 1 run in 6 beside 5 busy loops and once in CI. At 300 ms
    // the queue is seen empty in most scrapes before the pin (4-6 of 7), and 10 of 10 beside 5 busy loops.
    const { summary, records, scrapes } = await run(t, engine, { url: proxy.url, ca: null }, ['duration=8s', 'watchdog.first_token_ms=3000', 'agents.think_time_ms=300']);
    const hung = records.filter((r) => r.status === 'hang');
    assert.equal(hung.length, 1, `repeat ${i}: the pinned request hung: ${why(summary)}`);
    const sentMs = hung[0]!.run_ms;
    const inflight = summary.gauges.find((g) => g.target === 'prefill' && g.name === INFLIGHT);
    const before = inflightSamples(scrapes).filter((x) => x.ms < sentMs + 1000);
    assert.equal(
      inflight?.verdict,
      'pinned_under_load',
      `repeat ${i}: sent at ${sentMs} ms, the queue until a second after: ${before.map((x) => `${x.ms}:${x.value}`).join(' ')}; ${JSON.stringify(inflight)}`,
    );
    const floor = inflight.floor!;
    // The step the hung request made: the first scrape after its send from which the queue never went below
    // the floor's level again (the run's end, or the floor's own end). When the load already held the queue
    // at that level from before the send, the request joined that floor: the floor named is the load's, held
    // through the send, and the sentence says so — never a step after the one the request made.
    const samples = inflightSamples(scrapes).filter((x) => floor.to_ms === null || x.ms <= floor.to_ms);
    const made = samples.find((x, k) => x.ms >= sentMs && samples.slice(k).every((y) => y.value >= floor.level));
    t.diagnostic(`repeat ${i}: ${summary.diagnosis.verdict} ${summary.diagnosis.confidence}; sent ${sentMs} ms, floor ${floor.level} from ${floor.from_ms} ms, its step at ${made?.ms} ms`);
    if (floor.from_ms >= sentMs) assert.equal(floor.from_ms, made?.ms, `repeat ${i}: the floor named is the step the request made after its send (${sentMs} ms): ${JSON.stringify(floor)}`);
    else
      assert.ok(
        samples.filter((x) => x.ms >= floor.from_ms).every((x) => x.value >= floor.level),
        `repeat ${i}: a floor from before the send held through it: ${JSON.stringify(floor)}`,
      );
    assert.equal(summary.diagnosis.verdict, 'engine', `repeat ${i}: ${why(summary)}`);
    const seconds = (ms: number): string => (ms / 1000).toFixed(1).replace('.', '\\.');
    const sent = seconds(sentMs);
    assert.match(
      evidenceFor(summary),
      new RegExp(
        `prefill's ${INFLIGHT} floor stepped from ${floor.level - 1} to ${floor.level} at ${seconds(floor.from_ms)} s, (when the failed request sent at ${sent} s went in|[^:]+ after the failed request it matches was sent \\(${sent} s\\)|[^:]+ before the failed request it matches was sent \\(${sent} s\\): the load held the queue at ${floor.level} already)`,
      ),
      `repeat ${i}: ${why(summary)}`,
    );
    await proxy.stop();
    await engine.stop();
  }
});
