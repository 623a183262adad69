// A client sample with the client's own health pinned at quiet, for `executeRun({ clientSample })` in tests of the
// server-side verdicts (engine, proxy, pinned gauges): on a loaded test machine this process's event loop runs
// late, and the diagnosis would rightly blame the client (or the host) — a verdict about the machine the test
// ran on, not about the parts the test judges. The request records, gauges and canaries stay as measured.
// Tests of the client and host verdicts themselves (test/e2e/client-time.test.ts, the host-starved test of
// test/e2e/diagnosis-real.test.ts) never use it.
import type { ClientSampleEvent } from '../../src/types/index.js';

/** The sampler's interval (src/run/run.ts): a window of its usual length is a tick on time. */
const CLIENT_SAMPLE_MS = 1000;

export function quietClient(measured: ClientSampleEvent): ClientSampleEvent {
  return {
    ...measured,
    window_ms: CLIENT_SAMPLE_MS,
    loop_delay_p99_ms: 0,
    loop_delay_max_ms: 0,
    loop_utilization: Math.min(measured.loop_utilization, 0.1),
    cpu_wait_ms: measured.cpu_wait_ms === null ? null : 0,
  };
}
