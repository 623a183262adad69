// A RoundTarget on loopback for tests of one request: its own transport and tracker, closed after the test.
import type { TestContext } from 'node:test';
import type { RoundTarget } from '../../src/agent/index.js';
import { Transport, ConnectionTracker } from '../../src/transport/index.js';
import { realClock } from '../../src/watchdog/index.js';

export function roundTarget(
  t: TestContext,
  url: string,
  options: { deadlines?: Partial<RoundTarget['deadlines']>; connectTimeoutMs?: number; connectProxy?: string | null; proxyUrl?: string | null; headers?: Record<string, string> } = {},
): RoundTarget {
  const transport = new Transport({
    url,
    path: options.connectProxy ? 'proxy' : 'direct',
    tls: { caFile: null, insecure: false, servername: null },
    connectProxy: options.connectProxy ?? null,
    connection: 'per-agent',
    agents: 1,
    poolConnections: null,
    keepAliveTimeoutMs: 10_000,
    connectTimeoutMs: options.connectTimeoutMs ?? 5000,
    headersTimeoutMs: 30_000,
    bodyTimeoutMs: 30_000,
  });
  const tracker = new ConnectionTracker();
  t.after(async () => {
    tracker.close();
    await transport.close(100);
  });
  return {
    lane: transport.lane(0),
    tracker,
    clock: realClock,
    deadlines: { connectMs: 5000, headersMs: 5000, firstTokenMs: 5000, stallMs: 5000, totalMs: 10_000, ...options.deadlines },
    path: options.connectProxy ? 'proxy' : 'direct',
    endpoint: `${transport.basePath}/v1/chat/completions`,
    headers: options.headers ?? {},
    runStartMs: 0,
    proxyUrl: options.proxyUrl ?? options.connectProxy ?? null,
  };
}
