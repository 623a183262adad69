// uvicorn's keep-alive, as every server of the deployment applies it: an idle connection is closed after
// `keep_alive_s` (5 s by default), and no `Keep-Alive` header tells the client so — the keep-alive race lives
// in that silence.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { Client } from 'undici';
import { engine, server, until, USER } from './helpers.js';

const FAST = {
  decode_step_ms: 0,
  decode_step_ms_per_running: 0,
  prefill_ms_per_1k_tokens: 0,
  kv_transfer_ms: 0,
  kv_transfer_gbps: null,
  output_tokens_min: 2,
  output_tokens_max: 2,
  reasoning: 'off' as const,
};

/** Sends one request on a fresh keep-alive client and resolves with how long the server let it sit idle. */
async function idleLifetimeMs(url: string, path: string, method: 'GET' | 'POST', body?: string): Promise<{ idleMs: number; keepAliveHeader: unknown }> {
  const client = new Client(url, { keepAliveTimeout: 600_000, keepAliveMaxTimeout: 600_000, pipelining: 1 });
  let closedAtMs = 0;
  client.on('disconnect', () => {
    closedAtMs = performance.now();
  });
  try {
    const res = await client.request({ method, path, ...(body === undefined ? {} : { body, headers: { 'content-type': 'application/json' } }) });
    await res.body.text();
    const idleFromMs = performance.now();
    await until(() => closedAtMs > 0, 20_000, 'the server to close the idle connection');
    return { idleMs: closedAtMs - idleFromMs, keepAliveHeader: res.headers['keep-alive'] };
  } finally {
    await client.destroy();
  }
}

describe('idle keep-alive', () => {
  it('by default the router closes an idle connection after 5 s, and no response carries a Keep-Alive header', async (t) => {
    const e = await engine(FAST, t);
    const { idleMs, keepAliveHeader } = await idleLifetimeMs(e.url, '/v1/chat/completions', 'POST', JSON.stringify({ messages: [USER('then idle')] }));
    t.diagnostic(`closed after ${idleMs.toFixed(0)} ms idle`);
    assert.equal(keepAliveHeader, undefined);
    assert.ok(idleMs >= 4_500 && idleMs < 15_000, `closed after ${idleMs.toFixed(0)} ms idle (uvicorn: 5 s)`);
  });

  it('keep_alive_s applies to every server: the router, the prefill and the decode server', async (t) => {
    const e = await engine({ ...FAST, keep_alive_s: 0.3 }, t);
    for (const name of ['router', 'prefill', 'decode'] as const) {
      const { idleMs, keepAliveHeader } = await idleLifetimeMs(server(e, name).url, '/v1/models', 'GET');
      assert.equal(keepAliveHeader, undefined, name);
      assert.ok(idleMs >= 250 && idleMs < 10_000, `${name} closed after ${idleMs.toFixed(0)} ms idle`);
    }
  });
});
