// Two `roundload engine --port N` on one host start side by side: the router's metrics listen on a free port by
// default (a fixed 29000, as a real sgl-router's, made the second one fail), printed with each server. An
// explicit port in use is a clear ERR_SERVER_START naming the flag that asked for it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { freePort, spawnEngine } from '../helpers/procs.js';
import { runCli } from '../helpers/tmp.js';

/** A port something listens on until the test ends. */
async function takenPort(t: import('node:test').TestContext): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  return (server.address() as { port: number }).port;
}

test('two `roundload engine --port N` start side by side, each router on its own free metrics port, both serving', async (t) => {
  const ports = [await freePort(), await freePort()];
  assert.notEqual(ports[0], ports[1]);
  const engines = [];
  // One after the other: the second starts while the first holds its ports (the case that clashed).
  for (const port of ports) engines.push(await spawnEngine(t, {}, [], port));
  const metrics = engines.map((e) => e.targets.find((x) => x.name === 'router')?.url);
  engines.forEach((e, i) => assert.equal(e.port, ports[i], e.stderr));
  assert.ok(
    metrics.every((u) => u !== undefined && /^http:\/\/127\.0\.0\.1:\d+\/metrics$/.test(u)),
    metrics.join(', '),
  );
  assert.notEqual(new URL(metrics[0]!).port, new URL(metrics[1]!).port);
  for (const [i, e] of engines.entries()) {
    // Printed where a person reads it: the router's line names its metrics URL.
    assert.match(e.stderr, new RegExp(`router\\s+http://127\\.0\\.0\\.1:${ports[i]}\\s+metrics ${metrics[i]!.replace(/[.]/g, '\\.')}`));
    const models = await fetch(`${e.url}/v1/models`, { signal: AbortSignal.timeout(10_000) });
    assert.equal(models.status, 200);
    const scrape = await fetch(metrics[i]!, { signal: AbortSignal.timeout(10_000) });
    assert.match(await scrape.text(), /sgl_router_/);
  }
});

test("an explicit port in use is ERR_SERVER_START naming its flag (the router's metrics: --router-metrics-port), exit 2", async (t) => {
  const port = await takenPort(t);
  const res = await runCli(['engine', '--port', '0', '--router-metrics-port', String(port)], { timeoutMs: 60_000 });
  assert.equal(res.code, 2, res.stderr);
  assert.equal(
    res.stderr,
    `roundload: could not start the router's metrics (--router-metrics-port ${port}) on 127.0.0.1:${port}: the address is already in use (EADDRINUSE); pick another port, or stop what listens there\n`,
  );
  const prefill = await runCli(['engine', '--port', '0', '--prefill-port', String(port)], { timeoutMs: 60_000 });
  assert.equal(prefill.code, 2, prefill.stderr);
  assert.match(prefill.stderr, new RegExp(`could not start the prefill server \\(--prefill-port ${port}\\) on 127\\.0\\.0\\.1:${port}: the address is already in use`));
});
