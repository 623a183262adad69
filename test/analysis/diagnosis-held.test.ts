// Issue 41, class 4: a hop stalling a share of the requests while the engine's queues rotate, its scrapes
// answer and work flows, canaries too few to compare the legs, was `unknown`. The measurement: at each scrape
// the client's requests in flight beyond what the deployment's gauges held, regressed on its hung requests in
// flight — a slope of 1 when the engine holds none of them, 0 when it holds them all. Each constant of
// held-signal.ts on both sides of its boundary, and the edge cases: PD (a request in prefill and decode at
// once), a direct path, an engine stopped before its gauges (nothing flows), a full engine, no gauge reported.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diagnose, type DiagnosisInput, type ScrapePoint } from '../../src/analysis/index.js';
import { Context, type Window } from '../../src/analysis/diagnosis/context.js';
import { heldSignal } from '../../src/analysis/diagnosis/held-signal.js';
import { InFlightCounter, type InFlightPoint } from '../../src/analysis/diagnosis/in-flight.js';
import { scrapePoint } from '../../src/analysis/diagnosis/inputs.js';
import type { Episode } from '../../src/analysis/diagnosis/episodes.js';
import type { Diagnosis, PathKind } from '../../src/types/index.js';
import { activity, client, flow, hang, steadyRequests, type Span } from './diagnosis-fixtures.js';

const RUN_MS = 12_000;
const STEP_MS = 250;
/** The episode: hangs from 1.0 s to 10.5 s. */
const W: Window = { from_ms: 1000, to_ms: 10_500 };
/** Agents, each with a request in flight at every scrape: the hung ones, and the others the engine holds. */
const AGENTS = 6;
const text = (d: Diagnosis): string => d.evidence.join('\n');

interface World {
  /** Share of each hung request missing from the gauges: 1 none held (a hop stalling them), 0 all held. */
  slope?: number;
  /** The gauges' disagreement with the client at round i (default: ±0.3, neither drifting nor following the hung count). */
  noise?: (i: number) => number;
  /** Hung requests in flight at round i of the episode (default: 0, 1, 2, 3 in turn). */
  hung?: (i: number) => number;
  /** Scrape rounds, every 250 ms (default: over the 12 s run), from round `first` (default 0). */
  rounds?: number;
  first?: number;
  path?: PathKind;
  loopback?: boolean;
  /** Work stopped over these spans (no completion, no counter moving). */
  still?: Span[];
  /** The deployment as PD (prefill, decode and a router scraped) instead of one server. */
  pd?: boolean;
  /** No scraped server exposes a held gauge. */
  unreported?: boolean;
  /** Client windows late (900 ms) over these spans. */
  late?: Span[];
  /** Scrapes at these times got no answer (the engine down: killed, restarting). */
  downAt?: number[];
  /** The in-flight counts left out (files written before them). */
  noInFlight?: boolean;
  /** Share of the other requests' time in flight spent on the way (outside the gauges); with it, agents
   * thinking (none, two, one in turn), so the requests in flight vary apart from the hung ones. */
  transit?: number;
  /** Rounds at which the engine holds more than it ever does otherwise (the client's extra requests in it): its
   * ceiling, where more may wait in front of its gauges. */
  ceilingAt?: (i: number) => boolean;
}

/** Scrape rounds with the client's in-flight counts and the gauges' held count, as the world says. */
function world(w: World): { points: InFlightPoint[]; scrapes: ScrapePoint[] } {
  const slope = w.slope ?? 1;
  const noise = w.noise ?? ((i: number) => [0.3, -0.3, -0.3, 0.3][i % 4]!);
  const points: InFlightPoint[] = [];
  const scrapes: ScrapePoint[] = [];
  const first = w.first ?? 0;
  const n = w.rounds ?? RUN_MS / STEP_MS + 1;
  for (let i = first; i < first + n; i += 1) {
    const ms = i * STEP_MS;
    const inEpisode = ms >= W.from_ms && ms <= W.to_ms;
    const hung = inEpisode ? (w.hung ?? ((k: number) => k % 4))(i) : 0;
    // The engine holds the agents that are not hung, and the hung ones it holds; at its ceiling, one more of the
    // client's requests and all its agents that are not hung (the hung ones still missing).
    const top = w.ceilingAt?.(i) === true;
    const thinking = w.transit === undefined ? 0 : [0, 2, 1][i % 3]!;
    const others = AGENTS - hung - thinking;
    points.push({ run_ms: ms, all: top ? AGENTS + 1 + hung : others + hung, hung });
    const held = top ? AGENTS + 1 : others * (1 - (w.transit ?? 0)) + (1 - slope) * hung + noise(i);
    const down = w.downAt?.includes(ms) === true;
    const base = { run_ms: ms, duration_ms: 3, ok: !down, error: down ? 'connect ECONNREFUSED 127.0.0.1:30000' : null, queue: 0, running: 1 };
    const value = (x: number): number | null => (w.unreported === true || down ? null : x);
    if (w.pd === true) {
      // The decode holds every request from its prealloc on; the prefill some of them (counted twice then);
      // the router once per worker it sent each to.
      scrapes.push({ ...base, target: 'decode', side: 'decode', held: value(held) });
      scrapes.push({ ...base, target: 'prefill', side: 'prefill', held: value(held / 2) });
      scrapes.push({ ...base, target: 'router', side: null, held: value(2 * held) });
    } else {
      scrapes.push({ ...base, target: 'engine', side: null, held: value(held) });
    }
  }
  return { points, scrapes };
}

function input(w: World = {}): DiagnosisInput {
  const { points, scrapes } = world(w);
  const requests = steadyRequests(RUN_MS, w.still ?? []);
  const path = w.path ?? 'hop';
  return {
    path,
    loopback: w.loopback ?? null,
    // Hung at headers, one a second through the episode: each waited out its 1.5 s deadline.
    hangs: Array.from({ length: 9 }, (_, k) => hang(W.from_ms + k * 1000, W.from_ms + 1500 + k * 1000, 'headers', path)),
    canaries: [],
    scrapes,
    flows: (w.pd === true ? ['decode'] : ['engine']).map((t) => flow(t, RUN_MS, STEP_MS, w.still ?? [])),
    gauges: [],
    client: client(RUN_MS, w.late ?? []),
    activity: activity(requests),
    inFlight: w.noInFlight === true ? null : points,
  };
}

/** The held signal alone over the episode. */
function signal(w: World = {}): ReturnType<typeof heldSignal> {
  const i = input(w);
  const ctx = new Context(i);
  ctx.troubled = [W];
  const ep: Episode = { kind: 'hangs', from_ms: W.from_ms, to_ms: W.to_ms, hangs: [...i.hangs], errors: [] };
  return heldSignal(ep, W, ctx);
}

const missing = (w: World = {}): number =>
  signal(w)
    .votes.filter((v) => v.for.includes('proxy') || v.for.includes('network'))
    .reduce((a, v) => a + v.weight, 0);
const held = (w: World = {}): number =>
  signal(w)
    .votes.filter((v) => v.for.includes('engine'))
    .reduce((a, v) => a + v.weight, 0);

test('a hop stalling a share of the requests while work flows, no canaries: proxy — and unknown without the in-flight counts (the new evidence switched off)', () => {
  const d = diagnose(input());
  assert.equal(d.verdict, 'proxy', text(d));
  assert.ok((d.confidence ?? 0) >= 0.6, text(d));
  assert.match(text(d), /the engine does not hold the hung requests: .*each hung request in flight added 1\.0\d ± 0\.0\d to the client's requests beyond what the gauges held .*on the path/);
  const off = diagnose(input({ noInFlight: true }));
  assert.equal(off.verdict, 'unknown', text(off));
});

test("the other requests' time on the way (outside the gauges) is measured apart: it does not pass for hung requests held", () => {
  // A fifth of each other request's time on the way: fitted on the hung count alone, the slope would read about 0.8.
  const s = signal({ transit: 0.2 });
  assert.match(s.votes[0]!.text, /added (0\.9[5-9]|1\.0\d) ± 0\.\d\d .*; its other requests in flight 0\.(19|20|21) each, their time on the way\)/);
  assert.equal(missing({ transit: 0.2 }), 3);
  assert.equal(missing({ transit: 0.2, slope: 0 }), 0);
});

test('the engine holding the hung requests (an overloaded engine queueing them, a request pinned in a queue): no word for the proxy, a weak one for the engine', () => {
  assert.equal(missing({ slope: 0 }), 0);
  const s = signal({ slope: 0 });
  assert.equal(s.votes.length, 1);
  assert.deepEqual(s.votes[0]!.for, ['engine', 'engine_overloaded']);
  assert.deepEqual(s.votes[0]!.against, []);
  assert.ok(s.votes[0]!.weight > 0 && s.votes[0]!.weight <= 1, `weak: ${s.votes[0]!.weight}`);
  assert.match(s.votes[0]!.text, /^the engine holds the hung requests/);
  assert.notEqual(diagnose(input({ slope: 0 })).verdict, 'proxy');
});

test('HALF and HELD_ALPHA: the slope must clear the middle by its one-sided 95% interval, each way', () => {
  // 49 rounds, hung 0–3 in the episode: the slope's standard error is about 0.07 (the residual floor), the
  // critical t about 1.68: a vote from a slope of 0.62 up (for the proxy), and 0.38 down (for the engine).
  assert.ok(missing({ slope: 0.66 }) > 0);
  assert.equal(missing({ slope: 0.58 }), 0);
  assert.equal(held({ slope: 0.58 }), 0);
  assert.match(signal({ slope: 0.5 }).facts.join('\n'), /too uncertain to say/);
  assert.ok(held({ slope: 0.34 }) > 0);
  assert.equal(held({ slope: 0.42 }), 0);
  // A clear slope credits the cap (3 bits for the proxy, 1 for the engine).
  assert.equal(missing({ slope: 1 }), 3);
  assert.equal(held({ slope: 0 }), 1);
});

test('MIN_RESIDUAL_SD: gauges agreeing with the client to the request still leave a count read a moment apart uncertain', () => {
  // 8 rounds of the episode with no disagreement at all: without a floor the slope would be exact and credit the cap.
  const bits = missing({ first: 4, rounds: 8, noise: () => 0 });
  assert.ok(bits > 0 && bits < 3, `${bits}: a few exact rounds credit less than the cap`);
});

test('MIN_ROUNDS: four rounds make a measurement, three do not', () => {
  const four = signal({ first: 4, rounds: 4, slope: 1 });
  assert.match([...four.votes.map((v) => v.text), ...four.facts].join('\n'), /each hung request in flight added/);
  assert.match(signal({ first: 4, rounds: 3, slope: 1 }).facts.join('\n'), /too few independent rounds to measure it/);
});

test('the rounds’ correlation: a disagreement drifting over seconds counts for fewer rounds than one of the same size that alternates', () => {
  const drift = (i: number): number => 0.8 * Math.sin(i / 1.5);
  const alternating = (i: number): number => [0.8, -0.8, -0.8, 0.8][i % 4]!;
  const bits = (noise: (i: number) => number): number => missing({ slope: 0.75, noise });
  assert.ok(bits(drift) < bits(alternating), `${bits(drift)} < ${bits(alternating)}`);
  assert.match(signal({ slope: 1, noise: drift }).votes[0]!.text, /; (\d+) independent rounds\)/);
  const independent = (noise: (i: number) => number): number => Number(/; (\d+) independent rounds\)/.exec(signal({ slope: 1, noise }).votes[0]!.text)![1]);
  assert.ok(independent(drift) < independent(alternating), `${independent(drift)} < ${independent(alternating)}`);
});

test('FLOWING_SHARE: an engine stopped before its gauges (nothing flows: a wedged tokenizer) is not charged to the path; work in half the episode is flow', () => {
  // Nothing completes nor moves from 1 s to 10.5 s.
  const stopped = signal({ still: [{ from: 1000, to: 10_500 }] });
  assert.equal(stopped.votes.filter((v) => v.for.includes('proxy')).length, 0);
  assert.match(stopped.facts.join('\n'), /not weighed, as work flowed in only \d+% of the episode .*a wedged tokenizer/);
  // Work in the second half only: flowing in half the slices (the slices of 500 ms: 19, from 1.0 s).
  assert.ok(missing({ still: [{ from: 1000, to: 5500 }] }) > 0, 'flow in about half the episode');
  assert.equal(missing({ still: [{ from: 1000, to: 6500 }] }), 0, 'flow in under half');
});

test('the ceiling: a deployment holding as many as it ever did in half the rounds with hung requests may keep more waiting in front of its gauges (a full engine), not weighed', () => {
  // At its most in two of the three kinds of rounds with hung requests (one and two hung), not in the third.
  const full = signal({ ceilingAt: (i) => i % 4 === 1 || i % 4 === 2 });
  assert.equal(full.votes.filter((v) => v.for.includes('proxy')).length, 0);
  assert.match(full.facts.join('\n'), /not weighed, as the deployment held as many as it ever did \(7\) in \d+ of the \d+ rounds with hung requests in flight: a full engine/);
  // In one of the three: weighed.
  assert.equal(missing({ ceilingAt: (i) => i % 4 === 1 }), 3);
});

test('PD: the decode holds every request, the prefill some of them again, the router each once per worker — the largest server role counts, never their sum', () => {
  assert.equal(missing({ pd: true }), 3);
  assert.match(signal({ pd: true }).votes[0]!.text, /added 1\.0\d ± /);
  // The engine holding them in PD: nothing for the proxy (the sum of the roles would have made a slope below 0 or above 1).
  assert.equal(missing({ pd: true, slope: 0 }), 0);
  assert.ok(held({ pd: true, slope: 0 }) > 0);
});

test('a prefill read without its decode is not judged: the decode holds the requests past their prefill', () => {
  const i = input({ pd: true });
  const ctx = new Context({ ...i, scrapes: i.scrapes!.filter((s) => s.target === 'prefill') });
  ctx.troubled = [W];
  const s = heldSignal({ kind: 'hangs', from_ms: W.from_ms, to_ms: W.to_ms, hangs: [...i.hangs], errors: [] }, W, ctx);
  assert.equal(s.votes.length, 0);
  assert.match(s.facts.join('\n'), /not judged \(a prefill's gauges are read without its decode's/);
});

test('no held gauge reported: "not reported", never read as 0', () => {
  const s = signal({ unreported: true });
  assert.equal(s.votes.length, 0);
  assert.match(s.facts.join('\n'), /whether the engine holds the hung requests: not reported \(no scraped server exposes a gauge of the requests it holds: num_running_reqs/);
});

test('a direct path: no proxy to blame — the network between (not on this machine), a fact on loopback', () => {
  const remote = signal({ path: 'direct', loopback: false });
  assert.deepEqual(remote.votes[0]?.for, ['network']);
  assert.match(remote.votes[0].text, /between the client and the engine, with no proxy: the network/);
  const local = signal({ path: 'direct', loopback: true });
  assert.equal(local.votes.length, 0);
  assert.match(local.facts.join('\n'), /straight to this machine, nothing lies between: the engine's own front/);
  assert.notEqual(diagnose(input({ path: 'direct', loopback: true })).verdict, 'proxy');
});

test("the client's own delay: the rounds it was late are left out, and the vote weighed by the share of hangs it does not explain", () => {
  // Late from 2 s to 3 s: three of the nine hangs (1–2.5 s, 2–3.5 s, and 3–4.5 s from its last instant) lived through it.
  const s = signal({ late: [{ from: 2000, to: 3000 }] });
  const v = s.votes[0]!;
  assert.ok(Math.abs(v.weight - 3 * (6 / 9)) < 1e-9, `${v.weight}`);
  assert.match(v.text, /weighed 0\.67 of it: the client's own delay explains the rest of the hangs/);
});

test('an engine that did not answer (killed and started again) forgets what it held: the rounds within a hung request’s life of that moment are left out', () => {
  // Refused at 3 s: the rounds from 3 s to 4.5 s (the hangs live 1.5 s) are left out, the others weighed.
  const once = signal({ downAt: [3000] });
  assert.equal(once.votes[0]?.weight, 3);
  assert.match(once.votes[0].text, /; 6 rounds left out, within a hung request's life of a moment the engine did not answer \(a restarted engine forgets what it held\)/);
  // Refused every second of the episode: no round left to judge, and nothing for the path.
  const restarts = signal({ downAt: Array.from({ length: 10 }, (_, k) => 1000 + k * 1000) });
  assert.equal(restarts.votes.length, 0);
  assert.match(restarts.facts.join('\n'), /whether the engine holds the hung requests: not judged; \d+ rounds left out/);
});

test('the in-flight counter: a request counts at the scrapes its life spans, a hung one from when it got stuck; a scrape reported late is placed in order', () => {
  const c = new InFlightCounter();
  for (const ms of [0, 250, 750, 1000]) c.addScrape(ms);
  c.addScrape(500);
  c.addScrape(500);
  c.addRequest(100, 800, null);
  c.addRequest(200, 1100, 600);
  c.addRequest(250, 260, null);
  assert.deepEqual(c.points(), [
    { run_ms: 0, all: 0, hung: 0 },
    { run_ms: 250, all: 2, hung: 0 },
    { run_ms: 500, all: 2, hung: 0 },
    { run_ms: 750, all: 2, hung: 1 },
    { run_ms: 1000, all: 1, hung: 1 },
  ]);
});

test("a scrape's held count: its HELD_GAUGES summed over series (running, waiting, hand-off), null when it exposes none; a unified server is no PD prefill", () => {
  const at = (samples: { name: string; labels: Record<string, string>; value: number }[]): ScrapePoint =>
    scrapePoint({ kind: 'scrape', t: '', run_ms: 0, target: 'engine', url: '', duration_ms: 3, ok: true, error: null, burst: false, samples });
  const unified = { engine_type: 'unified' };
  const p = at([
    { name: 'sglang:num_running_reqs', labels: unified, value: 2 },
    { name: 'sglang:num_queue_reqs', labels: unified, value: 1 },
    { name: 'sglang:num_prefill_inflight_queue_reqs', labels: unified, value: 1 },
    { name: 'sglang:token_usage', labels: unified, value: 0.5 },
  ]);
  assert.equal(p.held, 4);
  assert.equal(p.side, null, 'engine_type="unified" says it is no PD server, whatever queues it shows');
  assert.equal(at([{ name: 'sglang:num_prefill_inflight_queue_reqs', labels: { engine_type: 'prefill' }, value: 0 }]).side, 'prefill');
  assert.equal(at([{ name: 'sglang:num_prefill_inflight_queue_reqs', labels: {}, value: 0 }]).side, 'prefill', 'no label: the queue only a prefill has');
  const llama = at([
    { name: 'llamacpp:requests_processing', labels: {}, value: 1 },
    { name: 'llamacpp:requests_deferred', labels: {}, value: 3 },
  ]);
  assert.equal(llama.held, 4);
  assert.equal(at([{ name: 'llamacpp:kv_cache_usage_ratio', labels: {}, value: 0.2 }]).held, null, 'not reported, never 0');
  assert.equal(at([{ name: 'sglang:num_running_reqs', labels: {}, value: 0 }]).held, 0, 'reported 0 is 0');
});
