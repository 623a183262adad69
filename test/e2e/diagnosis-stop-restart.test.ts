// What the probes and the matrix rerun found, on real parts (each engine its own process, real nginx and
// HAProxy in front): (a) the PD decode loop stopped 2.5 s and then going on while its HTTP servers answer —
// the queue fills and first tokens come late as under overload, work flows around the stop — is engine, the
// stop named, never engine_overloaded (a decode stuck inside a live process: SIGSTOP would freeze its HTTP
// server too, so the engine's own decode_stall makes it); (b) the engine SIGKILLed and started again on its
// port behind HAProxy with scrapes a second apart and no canaries: whether or not a scrape met it down, its
// counter went back and the restart is named from it. Each REPEATS times (3 in `npm run test:repeat`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Summary } from '../../src/analysis/index.js';
import { tempDir } from '../helpers/tmp.js';
import { realPartsWorkload, runWithActs, showDiagnosis, why } from '../helpers/real-parts.js';
import { requireTool, spawnEngine, startHaproxy, startNginx } from '../helpers/procs.js';
import { REPEATS, TIMES } from '../helpers/repeats.js';

/** A fast engine: short answers, quick steps. */
const ENGINE = { decode_step_ms: 5, output_tokens_min: 12, output_tokens_max: 20, stats_interval_steps: 0 };

/** Everything the run's episodes said, for and against and as facts. */
const told = (s: Summary): string => (s.diagnosis.episodes ?? []).flatMap((e) => [...e.evidence_for, ...e.evidence_against, ...e.facts]).join('\n');

test(`the PD decode stopped 2.5 s and then going on, behind nginx, 6 agents: engine with the stop named, never engine_overloaded, ${TIMES}`, async (t) => {
  const nginx = requireTool(t, 'nginx', 'apt-get install nginx');
  if (nginx === null) return;
  for (let i = 0; i < REPEATS; i += 1) {
    // A fresh deployment each time: the stall fires once per engine, at round 5.
    const engine = await spawnEngine(t, { ...ENGINE, faults: [{ kind: 'decode_stall', from_round: 5, times: 1, duration_s: 2.5 }] });
    const proxy = await startNginx(t, nginx, engine.port, { buffering: false });
    const dir = join(tempDir(t), 'run');
    const workload = realPartsWorkload('stop', { engine, via: `{kind: tls-proxy, url: "${proxy.url}"}`, set: ['duration=6s', 'agents.count=6'] });
    const summary = await runWithActs(workload, dir, { preflight: true });
    showDiagnosis(t, summary, dir);
    assert.ok(summary.totals.hangs > 0 && summary.totals.ok > 0, `repeat ${i}: the stop made hangs and work went on around it: ${JSON.stringify(summary.totals)}`);
    assert.equal(summary.diagnosis.verdict, 'engine', `repeat ${i}: ${why(summary)}`);
    assert.ok((summary.diagnosis.confidence ?? 0) >= 0.6, `repeat ${i}: ${why(summary)}`);
    assert.match(told(summary), /the decode stopped: decode made no token for \d+\.\d s .* running or waiting/, `repeat ${i}: ${why(summary)}`);
    await proxy.stop();
    await engine.stop();
  }
});

test(`the engine SIGKILLed and started again on its port behind HAProxy, scraped every second, no canaries: engine, the restart read from its counter, ${TIMES}`, async (t) => {
  const haproxy = requireTool(t, 'haproxy', 'apt-get install haproxy');
  if (haproxy === null) return;
  for (let i = 0; i < REPEATS; i += 1) {
    const engine = await spawnEngine(t, ENGINE, ['--topology', 'single']);
    const proxy = await startHaproxy(t, haproxy, engine.port);
    const restart = async (): Promise<void> => {
      await engine.kill();
      await spawnEngine(t, ENGINE, ['--topology', 'single', '--port', String(engine.port)]);
    };
    const dir = join(tempDir(t), 'run');
    const set = ['duration=6s', 'monitor.interval_ms=1000', 'monitor.canary_interval_s=0'];
    const workload = realPartsWorkload('restart', { engine, via: `{kind: tls-proxy, url: "${proxy.url}"}`, set });
    const summary = await runWithActs(workload, dir, { acts: [[1500, restart]] });
    showDiagnosis(t, summary, dir);
    assert.ok(summary.totals.hangs + summary.totals.errors > 0, `repeat ${i}: the kill made failures`);
    assert.equal(summary.diagnosis.verdict, 'engine', `repeat ${i}: ${why(summary)}`);
    assert.match(told(summary), /engine's \S+ went back between the scrapes at \d+\.\d s and \d+\.\d s: its process restarted, counting from 0/, `repeat ${i}: ${why(summary)}`);
    await proxy.stop();
  }
});
