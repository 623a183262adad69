import { test } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { longTimeout } from '../../src/util/index.js';

test('a long timeout longer than one underlying timer runs as a chain and fires once, not before it is due', async () => {
  const started = performance.now();
  let firedAtMs = -1;
  let fired = 0;
  // 60 ms in 7 ms chunks: nine timers, as 30 days run in 2^31 − 1 ms chunks.
  await new Promise<void>((resolve) => {
    longTimeout(
      () => {
        fired += 1;
        firedAtMs = performance.now() - started;
        resolve();
      },
      60,
      7,
    );
  });
  await sleep(30);
  assert.equal(fired, 1);
  assert.ok(firedAtMs >= 59, `fired after ${firedAtMs.toFixed(1)} ms`);
});

test('a cleared long timeout never fires, even between chunks', async () => {
  let fired = false;
  const timer = longTimeout(() => (fired = true), 40, 5);
  await sleep(12);
  timer.clear();
  timer.clear();
  await sleep(60);
  assert.equal(fired, false);
});

test('a delay past 2^31 − 1 ms does not fire after 1 ms as setTimeout does', async () => {
  let fired = false;
  const timer = longTimeout(() => (fired = true), 25 * 86_400_000);
  await sleep(50);
  timer.clear();
  assert.equal(fired, false);
});
