// Probes as real child processes: output and exit codes recorded, a command that never exits killed with its
// whole process group at its timeout (SIGKILL if it ignores SIGTERM), output bounded, hang probes rate-limited.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { ProbeRunner, runCommand } from '../../src/monitor/index.js';
import type { HangEvent, ProbeEvent, RequestRecord } from '../../src/types/index.js';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const end = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > end) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

function hang(agent: number): HangEvent {
  const record = {
    t: '2026-01-01T00:00:00.000Z',
    agent,
    round: 3,
    conversation: `a${agent}-c1`,
    hang: { phase: 'first_token', deadline: 'first_token_ms', deadline_ms: 500, last_byte_age_ms: 500 },
  } as unknown as RequestRecord;
  return { kind: 'hang', t: '2026-01-01T00:00:00.600Z', run_ms: 600, record };
}

describe('probes', () => {
  it('records exit code, stdout, stderr and duration of a command', async () => {
    const r = await runCommand('echo out; echo err >&2; exit 3', { timeoutMs: 5000, maxOutputBytes: 1024 });
    assert.deepEqual([r.exit_code, r.signal, r.timed_out, r.error, r.stdout, r.stderr, r.stdout_truncated], [3, null, false, null, 'out\n', 'err\n', false]);
    assert.ok(r.duration_ms >= 0 && r.duration_ms < 5000);
  });

  it('a command that never exits is killed at its timeout, with every process of its group', async () => {
    const started = performance.now();
    // The shell starts a background sleep (its pid printed first), then waits on a foreground one.
    const r = await runCommand('sleep 100 & echo $!; sleep 100', { timeoutMs: 300, maxOutputBytes: 1024 });
    const took = performance.now() - started;
    assert.equal(r.timed_out, true);
    assert.equal(r.signal, 'SIGTERM');
    assert.equal(r.exit_code, null);
    assert.ok(took >= 290 && took < 3000, `ended after ${took.toFixed(0)} ms`);
    const background = Number(r.stdout.trim());
    assert.ok(background > 0, r.stdout);
    assert.ok(await until(() => !alive(background), 2000), `background sleep ${background} was killed with the group`);
  });

  it('a command that ignores SIGTERM gets SIGKILL half a second later', async () => {
    const started = performance.now();
    const r = await runCommand("trap '' TERM; sleep 100", { timeoutMs: 200, maxOutputBytes: 1024 });
    const took = performance.now() - started;
    assert.equal(r.timed_out, true);
    assert.equal(r.signal, 'SIGKILL');
    assert.ok(took >= 650 && took < 4000, `ended after ${took.toFixed(0)} ms`);
  });

  it('keeps at most max bytes of stdout and stderr and says it cut them', async () => {
    const r = await runCommand("head -c 200000 /dev/zero | tr '\\0' a; head -c 5000 /dev/zero | tr '\\0' b >&2", { timeoutMs: 5000, maxOutputBytes: 1000 });
    assert.equal(r.exit_code, 0);
    assert.equal(r.stdout, 'a'.repeat(1000));
    assert.equal(r.stderr.length, 1000);
    assert.deepEqual([r.stdout_truncated, r.stderr_truncated], [true, true]);
  });

  it('runs start and end probes, passes the hang to hang probes, and rate-limits them (one at a time, one per interval)', async () => {
    const events: ProbeEvent[] = [];
    const runner = new ProbeRunner({
      probes: [
        {
          name: 'journal',
          command: 'echo "$ROUNDLOAD_PROBE_ON $ROUNDLOAD_HANG_PHASE agent=$ROUNDLOAD_HANG_AGENT round=$ROUNDLOAD_HANG_ROUND $ROUNDLOAD_HANG_T"; sleep 0.2',
          on: ['start', 'hang', 'end'],
          timeout_s: 5,
        },
        { name: 'only-end', command: 'echo "dir=$ROUNDLOAD_RUN_DIR"', on: ['end'], timeout_s: 5 },
      ],
      minIntervalMs: 60_000,
      maxOutputBytes: 4096,
      runStartMs: performance.now(),
      dir: '/tmp/run-x',
      emit: (e) => events.push(e),
    });
    await runner.run('start');
    runner.onHang(hang(1));
    runner.onHang(hang(2)); // while the first runs: skipped
    await until(() => events.length === 2, 5000);
    runner.onHang(hang(3)); // within the interval: skipped
    await runner.run('end');
    await runner.stop();
    // End probes run side by side: their order is not fixed.
    assert.deepEqual(events.map((e) => `${e.name}:${e.on}`).sort(), ['journal:end', 'journal:hang', 'journal:start', 'only-end:end']);
    assert.equal(events.filter((e) => e.on === 'hang').length, 1, 'the two later hangs were skipped');
    const hangRun = events.find((e) => e.on === 'hang')!;
    assert.equal(hangRun.stdout, 'hang first_token agent=1 round=3 2026-01-01T00:00:00.600Z\n');
    assert.equal(hangRun.skipped, 0);
    assert.equal(events.find((e) => e.name === 'only-end')!.stdout, 'dir=/tmp/run-x\n');
    // The next hang run would report the two skipped; run one past the limit to see it.
    const later = new ProbeRunner({ probes: [{ name: 'p', command: 'true', on: ['hang'], timeout_s: 5 }], minIntervalMs: 0, maxOutputBytes: 64, runStartMs: 0, dir: '', emit: (e) => events.push(e) });
    later.onHang(hang(1));
    later.onHang(hang(2));
    await until(() => events.length === 5, 5000);
    later.onHang(hang(3));
    await later.stop();
    assert.deepEqual(
      events.slice(4).map((e) => e.skipped),
      [0, 1],
    );
  });
});
