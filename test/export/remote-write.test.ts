import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startMetricsExport } from '../../src/export/index.js';
import { encodeWriteRequest } from '../../src/export/protobuf.js';
import { SnapshotQueue } from '../../src/export/remote-queue.js';
import { retryDelayMs } from '../../src/export/remote-writer.js';
import { plainRecord } from '../report/fixtures.js';
import { freePort } from '../helpers/procs.js';
import { VERDICTS, decodeBody, decodeWriteRequest, type DecodedSeries } from './wire.js';

interface Received {
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** What the receiver answered (null: nothing). */
  status: number | null;
}

/** A remote-write receiver on port 0 that answers each POST with `status` (or never answers with null). */
async function receiver(t: { after: (fn: () => unknown) => void }, answer: number | null | ((nth: number) => number | null) = 204): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const status = typeof answer === 'function' ? answer(received.length) : answer;
      received.push({ headers: req.headers, body: Buffer.concat(chunks), status });
      if (status !== null) res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? '' : 'out of order sample\nmore\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/write`, received };
}

const labelsOf = (s: DecodedSeries): Record<string, string> => Object.fromEntries(s.labels);

/** The series of every push the receiver took, joined: each series' samples in the order they came. */
function taken(received: readonly Received[]): DecodedSeries[] {
  const byKey = new Map<string, DecodedSeries>();
  for (const r of received) {
    if (r.status === null || r.status >= 300) continue;
    for (const s of decodeBody(r.body)) {
      const key = JSON.stringify(s.labels);
      const into = byKey.get(key);
      if (into === undefined) byKey.set(key, { labels: s.labels, samples: [...s.samples] });
      else into.samples.push(...s.samples);
    }
  }
  return [...byKey.values()];
}

const snap = (timestampMs: number, n: number) => ({ timestampMs, ids: Array.from({ length: n }, (_, i) => i), values: Array.from({ length: n }, () => 1) });

test('a WriteRequest decodes back to its series: labels sorted by name, doubles and millisecond timestamps exact, UTF-8 kept', () => {
  const t = Date.UTC(2026, 0, 1, 2, 0, 0, 123);
  const bytes = encodeWriteRequest([
    {
      labels: { __name__: 'roundload_requests_total', status: 'ok', phase: 'main', workload: 'nuit-été' },
      samples: [
        { value: 3, timestampMs: t },
        { value: 17, timestampMs: t + 10_000 },
      ],
    },
    { labels: { __name__: 'roundload_ttft_seconds_sum' }, samples: [{ value: 0.1 + 0.2, timestampMs: t }] },
    { labels: { __name__: 'roundload_requests_in_flight' }, samples: [{ value: -0, timestampMs: 0 }] },
  ]);
  const series = decodeWriteRequest(bytes);
  assert.equal(series.length, 3);
  assert.deepEqual(series[0]!.labels, [
    ['__name__', 'roundload_requests_total'],
    ['phase', 'main'],
    ['status', 'ok'],
    ['workload', 'nuit-été'],
  ]);
  assert.deepEqual(series[0]!.samples, [
    { value: 3, timestampMs: t },
    { value: 17, timestampMs: t + 10_000 },
  ]);
  assert.equal(series[1]!.samples[0]!.value, 0.1 + 0.2);
  assert.equal(series[2]!.samples[0]!.timestampMs, 0);
  assert.deepEqual(encodeWriteRequest([]), new Uint8Array(), 'no series: an empty message');
});

test('the queue drops its oldest snapshots past its bound (the newest always kept), gives batches of whole snapshots, and takes a failed batch back in front', () => {
  const q = new SnapshotQueue(10);
  assert.equal(q.add(snap(1, 4)), 0);
  assert.equal(q.add(snap(2, 4)), 0);
  assert.equal(q.add(snap(3, 4)), 4, 'over 10 samples: the oldest snapshot goes');
  assert.equal(q.samples, 8);
  const batch = q.take(5);
  assert.deepEqual(
    batch.map((s) => s.timestampMs),
    [2],
    'a batch stops before a snapshot that would pass its bound',
  );
  assert.equal(q.add(snap(4, 4)), 0);
  assert.equal(q.putBack(batch), 4, 'put back over the bound: the oldest (the batch) is dropped');
  assert.deepEqual(
    q.take(100).map((s) => s.timestampMs),
    [3, 4],
  );
  assert.equal(q.add(snap(5, 50)), 0, 'one snapshot bigger than the bound is kept');
  assert.equal(q.add(snap(6, 1)), 50, 'until a newer one comes');
  assert.equal(q.add(snap(7, 1)), 0);
  assert.equal(q.dropOlderThan(7), 1);
  assert.equal(q.newestMs, 7);
  assert.equal(q.take(1).length, 1);
  assert.ok(q.empty);
});

test('the retry delay starts at half a second and doubles, never past the interval', () => {
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6, 50].map((n) => retryDelayMs(n, 10_000)),
    [500, 1000, 2000, 4000, 8000, 10_000, 10_000],
  );
  assert.equal(retryDelayMs(3, 1000), 1000);
});

test('--remote-write: one snappy protobuf POST with the remote-write 1.0 headers, every series at the end time with the final values and verdicts, job and instance labels, Basic auth from the URL', async (t) => {
  const { url, received } = await receiver(t);
  const logs: string[] = [];
  const withAuth = url.replace('http://', 'http://nightly:s%3Acret@');
  const exported = await startMetricsExport({
    settings: { port: null, host: '127.0.0.1', linger_s: 0, remote_write_url: withAuth, remote_write_timeout_s: 5, remote_write_interval_s: 10 },
    workload: 'w',
    run: 'r1',
    version: '1.2.3',
    labels: {},
    inFlight: () => 0,
    log: (l) => logs.push(l),
  });
  assert.equal(exported.url, null, 'no port: no endpoint');
  exported.onEvent({ kind: 'request', record: plainRecord({ ttft_ms: 200 }) });
  exported.onEvent({ kind: 'request', record: plainRecord({ ttft_ms: 300 }) });
  const before = Date.now();
  await exported.finish(VERDICTS);
  assert.equal(received.length, 2, 'the start snapshot at once, then the end');
  const { headers } = received[1]!;
  assert.equal(headers['content-encoding'], 'snappy');
  assert.equal(headers['content-type'], 'application/x-protobuf');
  assert.equal(headers['x-prometheus-remote-write-version'], '0.1.0');
  assert.equal(headers.authorization, `Basic ${Buffer.from('nightly:s:cret').toString('base64')}`);
  const series = taken(received);
  const find = (name: string, labels: Record<string, string> = {}): DecodedSeries | undefined =>
    series.find((s) => {
      const l = labelsOf(s);
      return l.__name__ === name && Object.entries(labels).every(([k, v]) => l[k] === v);
    });
  const ok = find('roundload_requests_total', { status: 'ok', phase: 'main' });
  assert.ok(ok !== undefined, series.map((s) => labelsOf(s).__name__).join(' '));
  assert.deepEqual(labelsOf(ok), { __name__: 'roundload_requests_total', job: 'roundload', instance: labelsOf(ok).instance!, phase: 'main', status: 'ok', workload: 'w' }, 'no empty class label');
  const last = ok.samples.at(-1)!;
  assert.equal(last.value, 2);
  assert.ok(last.timestampMs >= before && last.timestampMs <= Date.now(), 'the last sample is at the end time');
  assert.equal(ok.samples.length, 1, 'no request had ended at the first snapshot: the series begins at the end');
  assert.equal(find('roundload_requests_in_flight')?.samples.length, 2, 'a snapshot at the start and one at the end');
  assert.equal(find('roundload_ttft_seconds_bucket', { le: '0.25' })?.samples.at(-1)?.value, 1);
  assert.equal(find('roundload_ttft_seconds_count')?.samples.at(-1)?.value, 2);
  assert.equal(find('roundload_diagnosis', { verdict: 'engine' })?.samples.at(-1)?.value, 1);
  assert.equal(find('roundload_gauge_verdict', { verdict: 'pinned', target: 'decode' })?.samples.at(-1)?.value, 1);
  assert.equal(find('roundload_run_info', { run: 'r1', version: '1.2.3' })?.samples.at(-1)?.value, 1);
  assert.equal(find('roundload_run_status', { status: 'completed' })?.samples.at(-1)?.value, 1);
  for (const s of series) {
    const names = s.labels.map(([n]) => n);
    assert.deepEqual(names, [...names].sort(), 'labels sorted by name');
  }
  assert.match(logs.at(-1) ?? '', /^remote write: 2 pushes, \d+ samples of \d+ series \(\d+ bytes\) sent to http:\/\/nightly:\*\*\*@127\.0\.0\.1:\d+\/api\/v1\/write$/);
});

test('a push refused with a 4xx is not sent again (one warning, counted), one never answered is given up within the timeout, and finish() resolves within it', async (t) => {
  const settings = { port: null, host: '127.0.0.1', linger_s: 0, remote_write_timeout_s: 0.5, remote_write_interval_s: 10 };
  for (const [status, pushes, expected] of [
    [
      400,
      [1, 2],
      /^warning: remote write: 0 pushes, 0 samples of \d+ series \(0 bytes\) sent to \S+; [12] pushe?s? failed \(last: HTTP 400: out of order sample\); samples not sent: [1-9]\d* refused, 0 dropped, 0 still queued at the end; the run's results are written all the same$/,
    ],
    [
      null,
      [1],
      /^warning: remote write: 0 pushes, .*; [12] pushe?s? failed \(last: (no answer within 0\.\d+ s|given up at the end of the run)\); samples not sent: 0 refused, 0 dropped, [1-9]\d* still queued at the end/,
    ],
  ] as const) {
    const { url, received } = await receiver(t, status);
    const logs: string[] = [];
    const exported = await startMetricsExport({ settings: { ...settings, remote_write_url: url }, workload: 'w', run: 'r', version: '1', labels: {}, inFlight: () => 0, log: (l) => logs.push(l) });
    const started = performance.now();
    await exported.finish(VERDICTS);
    assert.ok(performance.now() - started < 3000);
    // The start's snapshot and the end's: two pushes, or one when the end's snapshot joined the first batch
    // before it went out (a loaded machine); never more — a refused sample is not sent again.
    assert.ok((pushes as readonly number[]).includes(received.length), `${received.length} pushes: ${logs.join('\n')}`);
    if (status === 400) assert.match(logs.at(-1) ?? '', new RegExp(`; ${received.length} pushe?s? failed`), logs.join('\n'));
    assert.match(logs.at(-1) ?? '', expected, logs.join('\n'));
    if (status === 400) assert.equal(logs.filter((l) => l.includes('refused')).length, 2, 'one warning, then the last line');
  }
  const logs: string[] = [];
  const gone = `http://127.0.0.1:${await freePort()}/api/v1/write`;
  const exported = await startMetricsExport({ settings: { ...settings, remote_write_url: gone }, workload: 'w', run: 'r', version: '1', labels: {}, inFlight: () => 0, log: (l) => logs.push(l) });
  await exported.finish(VERDICTS);
  assert.match(logs[0] ?? '', /^warning: remote write to http:\/\/127\.0\.0\.1:\d+\/api\/v1\/write failed: fetch failed \(.*ECONNREFUSED.*\); retrying with backoff/);
  assert.match(logs.at(-1) ?? '', /still queued at the end/);
});

test('prom-client and snappyjs are loaded on demand only: no static import of them in src/', () => {
  const files = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
  for (const file of files('src')) {
    const text = readFileSync(file, 'utf8');
    assert.doesNotMatch(text, /^import (?!type )[^;]*from '(prom-client|snappyjs)'/m, file);
  }
});

test('pushes arrive while the run goes, one an interval, each newer than the last; together they hold every snapshot in time order', async (t) => {
  const { url, received } = await receiver(t);
  let inFlight = 0;
  const logs: string[] = [];
  const exported = await startMetricsExport({
    settings: { port: null, host: '127.0.0.1', linger_s: 0, remote_write_url: url, remote_write_timeout_s: 5, remote_write_interval_s: 1 },
    workload: 'w',
    run: 'r',
    version: '1',
    labels: {},
    inFlight: () => inFlight,
    log: (l) => logs.push(l),
  });
  for (let i = 1; i <= 3; i += 1) {
    await new Promise((r) => setTimeout(r, 1200));
    inFlight = i;
  }
  const during = received.length;
  await exported.finish(VERDICTS);
  assert.ok(during >= 2, `${during} pushes before the end`);
  const times = received.map((r) => Math.max(...decodeBody(r.body).flatMap((s) => s.samples.map((x) => x.timestampMs))));
  for (let i = 1; i < times.length; i += 1) assert.ok(times[i]! > times[i - 1]!, 'each push newer than the one before');
  const series = taken(received);
  const inFlightSeries = series.find((s) => labelsOf(s).__name__ === 'roundload_requests_in_flight')!;
  assert.equal(inFlightSeries.samples.length, received.length, 'one snapshot a push, none twice');
  const levels = [...new Set(inFlightSeries.samples.map((s) => s.value))];
  assert.deepEqual(levels, [0, 1, 2, 3].slice(0, levels.length), 'each level seen in time order');
  assert.ok(levels.length >= 2, `levels ${levels.join(' ')}`);
  for (const s of series) for (let i = 1; i < s.samples.length; i += 1) assert.ok(s.samples[i]!.timestampMs > s.samples[i - 1]!.timestampMs);
  assert.match(logs.at(-1) ?? '', new RegExp(`^remote write: ${received.length} pushes, \\d+ samples`));
});

test('a receiver that fails (503) is retried with backoff until it takes the samples: nothing lost, one warning, one line when it is back', async (t) => {
  const { url, received } = await receiver(t, (nth) => (nth < 3 ? 503 : 204));
  const logs: string[] = [];
  const exported = await startMetricsExport({
    settings: { port: null, host: '127.0.0.1', linger_s: 0, remote_write_url: url, remote_write_timeout_s: 5, remote_write_interval_s: 2 },
    workload: 'w',
    run: 'r',
    version: '1',
    labels: {},
    inFlight: () => 0,
    log: (l) => logs.push(l),
  });
  // 503 at 0 s, retries after 0.5 s and 1 s: the fourth try (about 1.5 s in) is taken.
  for (let i = 0; i < 100 && !received.some((r) => r.status === 204); i += 1) await new Promise((r) => setTimeout(r, 100));
  assert.ok(
    received.some((r) => r.status === 204),
    'taken before the end',
  );
  await exported.finish(VERDICTS);
  assert.equal(logs.filter((l) => l.startsWith('warning: remote write to') && l.includes('HTTP 503')).length, 1, logs.join('\n'));
  assert.ok(
    logs.some((l) => /pushing again after 3 failed pushes$/.test(l)),
    logs.join('\n'),
  );
  assert.match(logs.at(-1) ?? '', /^remote write: \d+ pushes, .*; 3 pushes failed and were retried$/);
  const first = taken(received).find((s) => labelsOf(s).__name__ === 'roundload_requests_in_flight')!;
  assert.ok(first.samples.length >= 2, 'the first snapshot, retried, and the last');
});

test('while the receiver is down the queue stays within its bound: the oldest samples are dropped, counted, with one warning', async (t) => {
  const { url } = await receiver(t, 503);
  const logs: string[] = [];
  const exported = await startMetricsExport({
    settings: { port: null, host: '127.0.0.1', linger_s: 0, remote_write_url: url, remote_write_timeout_s: 0.5, remote_write_interval_s: 1 },
    workload: 'w',
    run: 'r',
    version: '1',
    labels: {},
    inFlight: () => 0,
    log: (l) => logs.push(l),
    remoteWriteLimits: { maxQueuedSamples: 1 },
  });
  await new Promise((r) => setTimeout(r, 2500));
  await exported.finish(VERDICTS);
  assert.equal(logs.filter((l) => l.includes('the oldest are dropped')).length, 1, logs.join('\n'));
  assert.match(logs.at(-1) ?? '', /samples not sent: 0 refused, [1-9]\d* dropped, [1-9]\d* still queued at the end/);
});
