// executeRun closes what it started (the embedded engine, the built-in hop, the sockets) whatever throws,
// at any step of its setup: nothing is left listening after a failed run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import { tempDir } from '../helpers/tmp.js';

/** Whether something accepts TCP connections on `url`'s port. */
function listening(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const workload = (via: string) => parseWorkload(`name: cleanup\ntarget: {via: ${via}}\nagents: {count: 1, rounds: 1}\nmonitor: {enabled: false, canary_interval_s: 0}\n`, 'cleanup.yaml');

test('a setup step that throws after the engine and the hop started leaves neither listening', async (t) => {
  const urls: string[] = [];
  const forced = new Error('forced failure right after the hop started');
  const log = (line: string): void => {
    const m = /(https?:\/\/127\.0\.0\.1:\d+)/.exec(line);
    if (m !== null) urls.push(m[1]!);
    // The line saying which path the run takes comes once the hop is up: throw there.
    if (line.startsWith('path:')) throw forced;
  };
  await assert.rejects(executeRun({ workload: workload('{kind: hop}'), out: join(tempDir(t), 'r'), log }), forced);
  assert.equal(urls.length, 2, `engine and hop URLs seen: ${urls.join(', ')}`);
  for (const url of urls) assert.equal(await listening(url), false, `${url} closed`);
});

test('a preflight that fails (a CONNECT proxy that is down) closes the embedded engine and marks the run failed', async (t) => {
  const probe = await new Promise<number>((resolve) => {
    const s = connect(9, '127.0.0.1');
    s.once('error', () => resolve(9));
    s.once('connect', () => {
      s.destroy();
      resolve(-1);
    });
  });
  if (probe < 0) return t.skip('something listens on port 9');
  const out = join(tempDir(t), 'r');
  let engineUrl = '';
  const log = (line: string): void => {
    const m = /(?:embedded engine on|embedded PD deployment: router) (http:\/\/\S+)/.exec(line);
    if (m !== null) engineUrl = m[1]!;
  };
  await assert.rejects(
    executeRun({ workload: workload('{kind: connect, url: "http://127.0.0.1:9"}'), out, log }),
    (e: Error & { code?: string }) => e.code === 'ERR_PREFLIGHT' && /the proxy http:\/\/127\.0\.0\.1:9 is unreachable/.test(e.message),
  );
  assert.notEqual(engineUrl, '');
  assert.equal(await listening(engineUrl), false, 'the engine is closed');
  const manifest = JSON.parse(readFileSync(join(out, 'run.json'), 'utf8')) as { status: string };
  assert.equal(manifest.status, 'failed');
  assert.ok(existsSync(join(out, 'summary.json')));
  const events = readFileSync(join(out, 'events.jsonl'), 'utf8');
  assert.match(events, /"kind":"preflight","t":"[^"]+","run_ms":\d+,"ok":false/);
});
