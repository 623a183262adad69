// ROUNDLOAD_ENGINE_SET: engine settings from the environment, applied last (an A/B arm restarts the engine
// with another decode speed this way); a malformed pair or a bad value is a usage error naming the variable.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { engineEnvOverrides, resolveEngineSettings } from '../../src/commands/engine.js';
import { UsageError } from '../../src/errors.js';

test('key=value pairs, separated by spaces, commas or semicolons, values read as YAML', () => {
  assert.deepEqual(engineEnvOverrides('decode_speedup=1.057, decode_step_ms=30;topology=single'), { decode_speedup: 1.057, decode_step_ms: 30, topology: 'single' });
  assert.deepEqual(engineEnvOverrides(undefined), {});
  assert.deepEqual(engineEnvOverrides('  '), {});
  assert.throws(
    () => engineEnvOverrides('decode_speedup'),
    (e: unknown) => e instanceof UsageError && /ROUNDLOAD_ENGINE_SET: "decode_speedup" is not key=value/.test(e.message),
  );
});

test('applied after the defaults and --topology; a bad value names the variable', async () => {
  const settings = await resolveEngineSettings({ topology: 'single' }, 'decode_speedup=1.5');
  assert.equal(settings.decode_speedup, 1.5);
  assert.equal(settings.topology, 'single');
  assert.equal((await resolveEngineSettings({}, undefined)).decode_speedup, 1);
  await assert.rejects(resolveEngineSettings({}, 'decode_speedup=-1'), /engine settings \(with ROUNDLOAD_ENGINE_SET="decode_speedup=-1"\): decode_speedup: /);
});

test('a separate `roundload engine` gets its run spread this way too (run_spread_pct, run_spread_seed)', async () => {
  const settings = await resolveEngineSettings({}, 'run_spread_pct=3 run_spread_seed=12');
  assert.equal(settings.run_spread_pct, 3);
  assert.equal(settings.run_spread_seed, 12);
  await assert.rejects(resolveEngineSettings({}, 'run_spread_pct=-3'), /ROUNDLOAD_ENGINE_SET="run_spread_pct=-3"\): run_spread_pct: /);
});
