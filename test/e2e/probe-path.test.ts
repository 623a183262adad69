// `roundload probe-path` against real parts: real nginx (keepalive_timeout 3s, proxy_read_timeout 2s,
// client_max_body_size 1m) in front of the embedded engine as its own process, slow at prefill. The probe
// must name each limit: idle ≈ 3 s, a held response cut at ≈ 2 s, bodies up to ≈ 1 MiB; and a second nginx
// (TLS, proxy_buffering on) must be seen buffering streams where the first passes them through.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from '../helpers/tmp.js';
import { freePort, requireTool, spawnEngine, startNginx } from '../helpers/procs.js';
import type { ProbeReport } from '../../src/probe-path/index.js';

/** Prefill 10 s per 1000 tokens: the probe's held request (about 32k tokens) outlasts any proxy here; its
 * short stream question (about 20 tokens) starts in 0.2 s and decodes 30-40 tokens 20 ms apart. */
const SLOW_PREFILL = { topology: 'single', prefill_ms_per_1k_tokens: 10_000, decode_step_ms: 20, output_tokens_min: 30, output_tokens_max: 40, stats_interval_steps: 0 };
const MIB = 1024 * 1024;

async function probe(args: string[]): Promise<{ report: ProbeReport; stderr: string }> {
  const r = await runCli(['probe-path', ...args, '--json'], { timeoutMs: 40_000 });
  assert.equal(r.code, 0, `probe-path exited ${r.code}: ${r.stderr}`);
  return { report: JSON.parse(r.stdout) as ProbeReport, stderr: r.stderr };
}

test('probe-path through nginx names its idle timeout (3 s), its read timeout (2 s) and its body limit (1 MiB), and sees TLS buffering', async (t) => {
  const nginx = requireTool(t, 'nginx', 'apt-get install nginx');
  if (nginx === null) return;
  // Two engines: the held request keeps a prefill busy, and the buffering probe must not queue behind it.
  const [engine, spare] = await Promise.all([spawnEngine(t, SLOW_PREFILL), spawnEngine(t, SLOW_PREFILL)]);
  const limits = await startNginx(t, nginx, engine.port, { buffering: false, readTimeoutS: 2, keepaliveTimeoutS: 3, clientMaxBodySize: '1m' });
  const buffering = await startNginx(t, nginx, spare.port, { buffering: true, tls: true });

  const buffered = await probe([buffering.url, '--ca', buffering.caFile ?? '', '--skip', 'idle,read,body']);
  assert.equal(buffered.report.stream?.kind, 'buffers', JSON.stringify(buffered.report.stream));
  assert.equal(buffered.report.idle, null);

  const started = performance.now();
  const { report, stderr } = await probe([limits.url, '--max-idle', '5s', '--max-hold', '5s']);
  const tookS = (performance.now() - started) / 1000;
  t.diagnostic(`probe took ${tookS.toFixed(1)} s: ${JSON.stringify({ idle: report.idle?.estimateMs, read: report.read, stream: report.stream?.detail, body: report.body })}`);

  const idle = report.idle;
  assert.ok(idle !== null && idle.kind === 'closes' && idle.estimateMs !== null, JSON.stringify(idle));
  assert.ok(Math.abs(idle.estimateMs - 3000) <= 1000, `idle ≈ ${idle.estimateMs} ms`);
  assert.ok(idle.elapsedMs <= 2 * 5000 + 2000, `the idle check took ${idle.elapsedMs} ms`);

  const read = report.read;
  assert.ok(read !== null && read.kind === 'cut', JSON.stringify(read));
  assert.ok(Math.abs(read.atMs - 2000) <= 500, `cut at ${read.atMs} ms`);

  assert.equal(report.stream?.kind, 'passes', JSON.stringify(report.stream));

  const body = report.body;
  assert.ok(body !== null && body.kind === 'limit' && body.acceptedBytes !== null && body.rejectedBytes !== null, JSON.stringify(body));
  assert.ok(body.acceptedBytes >= 0.5 * MIB && body.rejectedBytes <= 2 * MIB, `accepted ${body.acceptedBytes}, refused ${body.rejectedBytes}`);
  assert.match(body.how ?? '', /413/);
  assert.ok(body.tried.length <= 8);

  assert.match(stderr, /^idle: /m, 'progress lines on stderr');
  assert.ok(tookS < 30, `the whole probe took ${tookS.toFixed(1)} s`);
});

test('probe-path exits 3 when nothing listens, 2 on a bad flag', async () => {
  const port = await freePort();
  const down = await runCli(['probe-path', `http://127.0.0.1:${port}`, '--skip', 'idle'], { timeoutMs: 20_000 });
  assert.equal(down.code, 3, down.stderr);
  assert.match(down.stderr, /unreachable/);
  const bad = await runCli(['probe-path', `http://127.0.0.1:${port}`, '--skip', 'idle,latency'], { timeoutMs: 20_000 });
  assert.equal(bad.code, 2, bad.stderr);
  assert.match(bad.stderr, /unknown check "latency"/);
});
