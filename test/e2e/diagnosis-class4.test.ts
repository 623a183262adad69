// Issue 41, class 4: a hop stalling a share of the agents' requests while the engine's queues rotate, its scrapes
// answer and work flows, with canaries too sparse to compare the legs. What places it is the agents' own
// traffic: at each scrape the client had more requests in flight than the deployment's gauges held, by about
// one per hung request — the engine never had them. The embedded engine as its own process (PD, scraped), the
// built-in hop stalling a seeded quarter of the requests past the first on each connection. REPEATS times (3
// in `npm run test:repeat`): proxy at 0.6 or more each time.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Summary } from '../../src/analysis/index.js';
import { tempDir } from '../helpers/tmp.js';
import { realPartsWorkload, runWithActs, showDiagnosis, why } from '../helpers/real-parts.js';
import { spawnEngine, type EngineProc } from '../helpers/procs.js';
import { REPEATS, TIMES } from '../helpers/repeats.js';

/** A fast engine: short answers, quick steps (as diagnosis-real's). */
const ENGINE = { decode_step_ms: 5, output_tokens_min: 12, output_tokens_max: 20, stats_interval_steps: 0 };

async function run(t: TestContext, engine: Pick<EngineProc, 'url' | 'targets'>, seed: number): Promise<Summary> {
  const dir = join(tempDir(t), 'run');
  const workload = realPartsWorkload('class4', {
    engine,
    via: `{kind: hop, faults: [{kind: stall, after_requests: 1, ratio: 0.25, seed: ${seed}}]}`,
    duration: '8s',
    // One canary each way in the run: nothing to compare the legs on.
    canary: { interval_s: 30, timeout_ms: 800 },
    set: ['agents.count=6'],
  });
  const summary = await runWithActs(workload, dir);
  showDiagnosis(t, summary, dir);
  return summary;
}

test(`a hop stalling a quarter of the requests while work flows and canaries are sparse is proxy (the engine does not hold the hung requests), ${TIMES}`, async (t) => {
  const engine = await spawnEngine(t, ENGINE);
  const seen: string[] = [];
  for (let i = 0; i < REPEATS; i += 1) {
    const summary = await run(t, engine, 3 + i);
    const d = summary.diagnosis;
    seen.push(`${d.verdict} ${d.confidence ?? '-'}`);
    assert.ok(summary.totals.ok > 0 && summary.totals.hangs >= 3, `repeat ${i}: some complete, some hang: ${JSON.stringify(summary.totals)}`);
    assert.equal(d.verdict, 'proxy', `repeat ${i}: ${why(summary)}`);
    assert.ok((d.confidence ?? 0) >= 0.6, `repeat ${i}: ${why(summary)}`);
    const main = d.episodes!.find((e) => e.kind === 'hangs' && e.verdict === 'proxy');
    assert.ok(
      main?.evidence_for.some((x) => x.startsWith('the engine does not hold the hung requests')),
      `repeat ${i}: the held-requests measurement is what placed it: ${why(summary)}`,
    );
  }
  t.diagnostic(`verdicts: ${seen.join('; ')}`);
});
