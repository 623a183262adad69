// The embedded engine's thread is kept between runs (an A/B or a sweep of many runs in one process starts
// the deployment again and again): reusing it must not pile up listeners on it. Twelve start/close cycles
// give no MaxListenersExceededWarning and each start answers on its own URL; each start draws its own run speed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { engineSchema } from '../../src/config/index.js';
import { startEngineThread } from '../../src/engine/index.js';
import { drawRunSpeed } from '../../src/engine/run-speed.js';

test('twelve runs on the reused engine thread: no listener leak warning', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'roundload-thread-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const warnings: string[] = [];
  const onWarning = (w: Error): void => void warnings.push(`${w.name}: ${w.message}`);
  process.on('warning', onWarning);
  t.after(() => process.off('warning', onWarning));
  const settings = engineSchema.parse({ topology: 'single' });
  for (let i = 0; i < 12; i += 1) {
    const engine = await startEngineThread({ settings, modelName: 'deepseek-v4-flash', logDir: join(dir, String(i)) });
    const res = await fetch(`${engine.url}/metrics`, { headers: { connection: 'close' } });
    await res.arrayBuffer();
    assert.equal(res.status, 200);
    await engine.close();
  }
  // A warning is emitted on the next tick after the listener that crossed the limit.
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(warnings, []);
});

test('each start on the reused thread draws its own run speed, as each run of an A/B restarts its engine', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'roundload-thread-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const settings = engineSchema.parse({ topology: 'single', run_spread_pct: 3 });
  const speeds = [];
  for (let i = 0; i < 3; i += 1) {
    const engine = await startEngineThread({ settings, modelName: 'deepseek-v4-flash', logDir: join(dir, String(i)) });
    speeds.push(engine.runSpeed);
    await engine.close();
  }
  assert.equal(new Set(speeds.map((s) => s.seed)).size, 3, JSON.stringify(speeds));
  for (const s of speeds) assert.deepEqual(s, drawRunSpeed(3, s.seed), 'the factor is the one its seed draws');
});
