// The client's own health samples: the kernel's run-queue wait is read each window (Linux), so a process the
// host starved of CPU is told from one that was busy by a direct measure, not only by late timers; and a stall
// that begins right after a window's sample is still seen.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpus } from 'node:os';
import { ClientSampler, runQueueWaitNs } from '../../src/run/client-sampler.js';

test("on Linux a sample carries the window's run-queue wait, and it grows while another thread holds the only CPU", { skip: process.platform !== 'linux' }, async () => {
  assert.equal(typeof runQueueWaitNs(), 'number');
  const sampler = new ClientSampler();
  const quiet = sampler.sample(0, 0);
  assert.equal(typeof quiet.cpu_wait_ms, 'number');
  // Pin this process and a busy child to one core, then spin here too: the kernel must share that core, so this
  // thread waits runnable for a good part of the time.
  const core = '0';
  const busy = spawn('taskset', ['-c', core, process.execPath, '-e', 'const end = Date.now() + 1500; while (Date.now() < end) {}'], { stdio: 'ignore' });
  const pinned = spawn('taskset', ['-cp', core, String(process.pid)], { stdio: 'ignore' });
  await new Promise((r) => pinned.once('exit', r));
  try {
    await new Promise((r) => setTimeout(r, 100));
    const end = Date.now() + 800;
    while (Date.now() < end) {
      // spin: runnable all along, so any time off the CPU is run-queue wait
    }
    const s = sampler.sample(0, 0);
    assert.ok(s.cpu_wait_ms! >= 100, `waited ${s.cpu_wait_ms} ms for the CPU while a busy process shared its only core`);
  } finally {
    busy.kill('SIGKILL');
    await new Promise((r) => spawn('taskset', ['-cp', `0-${cpus().length - 1}`, String(process.pid)], { stdio: 'ignore' }).once('exit', r));
  }
});

test("a stall that begins right after a sample (Node's delay histogram, just reset, does not record it) is the next window's delay", async () => {
  const sampler = new ClientSampler();
  const samples: number[] = [];
  let stalled = false;
  sampler.start(
    200,
    0,
    () => 0,
    (s) => {
      samples.push(s.loop_delay_max_ms);
      if (stalled) return;
      stalled = true;
      // In the very callback that took the sample: the histogram was reset a moment ago.
      const end = performance.now() + 600;
      while (performance.now() < end) {
        // busy: the client's loop held
      }
    },
  );
  try {
    for (let i = 0; i < 100 && samples.length < 3; i += 1) await new Promise((r) => setTimeout(r, 50));
  } finally {
    sampler.stop();
  }
  assert.ok(samples.length >= 3, `samples: ${samples.join(', ')}`);
  assert.ok(samples[1]! >= 500, `the window after the stall reads ${samples[1]} ms late (samples: ${samples.join(', ')})`);
});
