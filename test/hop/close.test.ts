import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeWithin } from '../../src/hop/close.js';

/** The bound's timer is unref'd (it never keeps a process alive): something else must, as the server does. */
function keepAlive(t: { after: (fn: () => void) => void }): void {
  const timer = setInterval(() => {}, 1_000);
  t.after(() => clearInterval(timer));
}

test('a close whose server never says it closed still resolves once its bound runs out, cleaning up once', async (t) => {
  keepAlive(t);
  let started = 0;
  let cleanups = 0;
  await closeWithin(
    20,
    () => (started += 1),
    () => (cleanups += 1),
  );
  assert.equal(started, 1);
  assert.equal(cleanups, 1);
});

test('a close resolves as soon as the server says it closed, not at its bound, and cleans up once however often it is told', async (t) => {
  keepAlive(t);
  let finish: () => void = () => assert.fail('start was not called');
  let cleanups = 0;
  let resolved = false;
  const closing = closeWithin(
    3_600_000,
    (f) => (finish = f),
    () => (cleanups += 1),
  ).then(() => (resolved = true));
  await new Promise(setImmediate);
  assert.equal(resolved, false, 'still waiting for the server');
  assert.equal(cleanups, 0);
  finish();
  finish();
  await new Promise(setImmediate);
  assert.equal(resolved, true, 'resolved at once, an hour before its bound');
  assert.equal(cleanups, 1);
  await closing;
});
