import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startMetricsExport } from '../../src/export/index.js';
import { encodeWriteRequest } from '../../src/export/protobuf.js';
import { SeriesRecorder } from '../../src/export/series.js';
import { plainRecord } from '../report/fixtures.js';
import { freePort } from '../helpers/procs.js';
import { VERDICTS, decodeBody, decodeWriteRequest, type DecodedSeries } from './wire.js';

interface Received {
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A remote-write receiver on port 0 that answers each POST with `status` (or never answers with null). */
async function receiver(t: { after: (fn: () => unknown) => void }, status: number | null = 204): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks) });
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

test('the recorder keeps one sample list per series, leaves empty labels out, and past its bound keeps every other snapshot (the last always) at twice the interval', () => {
  const recorder = new SeriesRecorder({ extraLabels: { job: 'roundload', instance: 'h' }, intervalMs: 1000, maxSnapshots: 4 });
  const family = (value: number) => [{ name: 'roundload_requests_total', values: [{ value, labels: { phase: 'main', status: 'ok', class: '' } }] }];
  assert.equal(recorder.due(0), true, 'the first snapshot is always due');
  for (let i = 0; i < 5; i += 1) recorder.add(family(i), i * 1000);
  const [series] = recorder.series();
  assert.deepEqual(series!.labels, { job: 'roundload', instance: 'h', __name__: 'roundload_requests_total', phase: 'main', status: 'ok' });
  assert.deepEqual(
    series!.samples.map((s) => s.timestampMs),
    [0, 2000, 4000],
  );
  assert.equal(recorder.due(5000), false, 'the interval doubled to 2 s');
  assert.equal(recorder.due(6000), true);
  recorder.add(family(9), 4000);
  assert.deepEqual(
    recorder.series()[0]!.samples.map((s) => s.timestampMs),
    [0, 2000, 4000],
    'a snapshot no later than the last is left out',
  );
});

test('--remote-write: one snappy protobuf POST with the remote-write 1.0 headers, every series at the end time with the final values and verdicts, job and instance labels, Basic auth from the URL', async (t) => {
  const { url, received } = await receiver(t);
  const logs: string[] = [];
  const withAuth = url.replace('http://', 'http://nightly:s%3Acret@');
  const exported = await startMetricsExport({
    settings: { port: null, host: '127.0.0.1', linger_s: 0, remote_write_url: withAuth, remote_write_timeout_s: 5 },
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
  assert.equal(received.length, 1);
  const { headers, body } = received[0]!;
  assert.equal(headers['content-encoding'], 'snappy');
  assert.equal(headers['content-type'], 'application/x-protobuf');
  assert.equal(headers['x-prometheus-remote-write-version'], '0.1.0');
  assert.equal(headers.authorization, `Basic ${Buffer.from('nightly:s:cret').toString('base64')}`);
  const series = decodeBody(body);
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
  assert.match(logs.at(-1) ?? '', /^remote write: \d+ series, \d+ samples \(\d+ bytes\) pushed to http:\/\/nightly:\*\*\*@127\.0\.0\.1:\d+\/api\/v1\/write$/);
});

test('a remote write that is refused or never answered is a warning within its timeout, and finish() still resolves', async (t) => {
  const settings = { port: null, host: '127.0.0.1', linger_s: 0, remote_write_timeout_s: 0.5 };
  for (const [status, expected] of [
    [400, /^warning: remote write to \S+ failed: HTTP 400: out of order sample; the run's results are written all the same$/],
    [null, /^warning: remote write to \S+ failed: no answer within 0\.5 s; the run's results are written all the same$/],
  ] as const) {
    const { url } = await receiver(t, status);
    const logs: string[] = [];
    const exported = await startMetricsExport({ settings: { ...settings, remote_write_url: url }, workload: 'w', run: 'r', version: '1', labels: {}, inFlight: () => 0, log: (l) => logs.push(l) });
    const started = performance.now();
    await exported.finish(VERDICTS);
    assert.ok(performance.now() - started < 3000);
    assert.match(logs.at(-1) ?? '', expected);
  }
  const logs: string[] = [];
  const gone = `http://127.0.0.1:${await freePort()}/api/v1/write`;
  const exported = await startMetricsExport({ settings: { ...settings, remote_write_url: gone }, workload: 'w', run: 'r', version: '1', labels: {}, inFlight: () => 0, log: (l) => logs.push(l) });
  await exported.finish(VERDICTS);
  assert.match(logs.at(-1) ?? '', /^warning: remote write to http:\/\/127\.0\.0\.1:\d+\/api\/v1\/write failed: fetch failed \(.*ECONNREFUSED.*\)/);
});

test('prom-client and snappyjs are loaded on demand only: no static import of them in src/', () => {
  const files = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
  for (const file of files('src')) {
    const text = readFileSync(file, 'utf8');
    assert.doesNotMatch(text, /^import (?!type )[^;]*from '(prom-client|snappyjs)'/m, file);
  }
});

test('the push carries the run over time: a snapshot every interval while it goes, each series in strictly increasing time', async (t) => {
  const { url, received } = await receiver(t);
  let inFlight = 0;
  const exported = await startMetricsExport({
    settings: { port: null, host: '127.0.0.1', linger_s: 0, remote_write_url: url, remote_write_timeout_s: 5 },
    workload: 'w',
    run: 'r',
    version: '1',
    labels: {},
    inFlight: () => inFlight,
    log: () => {},
    snapshotIntervalMs: 100,
  });
  for (let i = 1; i <= 4; i += 1) {
    await new Promise((r) => setTimeout(r, 300));
    inFlight = i;
  }
  await exported.finish(VERDICTS);
  const series = decodeBody(received[0]!.body);
  const inFlightSeries = series.find((s) => labelsOf(s).__name__ === 'roundload_requests_in_flight')!;
  const values = inFlightSeries.samples.map((s) => s.value);
  assert.ok(values.length >= 5, `${values.length} snapshots`);
  assert.deepEqual([...new Set(values)], [0, 1, 2, 3, 4], 'each level seen in time order');
  for (const s of series) for (let i = 1; i < s.samples.length; i += 1) assert.ok(s.samples[i]!.timestampMs > s.samples[i - 1]!.timestampMs);
});
