// One name, one meaning: a trace's first SSE data event is `first_chunk_ms` (requests.jsonl's `ttfc_ms` is the
// first content token, another figure), and a trace written before the rename, with `ttfc_ms`, reads the same.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { startRecorder, readTrace } from '../../src/trace/index.js';
import { tempDir } from '../helpers/tmp.js';

const data = (delta: Record<string, unknown>, finish: string | null = null): string => `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** An upstream streaming a role chunk, then after 60 ms the content. */
async function upstream(t: import('node:test').TestContext): Promise<string> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      void (async () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(data({ role: 'assistant', content: '' }));
        await sleep(60);
        res.write(data({ content: 'hello' }));
        res.end(`${data({}, 'stop')}data: [DONE]\n\n`);
      })();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

test("a trace names its first SSE data event first_chunk_ms (never ttfc_ms); an older trace's ttfc_ms reads as it", async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'trace.jsonl');
  const recorder = await startRecorder({ upstream: await upstream(t), out: file });
  t.after(() => recorder.close());
  const res = await request(`${recorder.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.body.text();
  await recorder.close();
  const text = readFileSync(file, 'utf8');
  assert.doesNotMatch(text, /ttfc_ms/);
  const [r] = readTrace(file).requests;
  const { first_chunk_ms: firstChunk, ttft_ms: ttft } = r!.response;
  assert.ok(firstChunk !== null && ttft !== null, JSON.stringify(r!.response));
  assert.ok(firstChunk <= ttft, `the role chunk (${firstChunk} ms) comes before the first content token (${ttft} ms)`);

  // The same trace as an older roundload wrote it.
  const old = join(dir, 'old.jsonl');
  writeFileSync(old, text.replaceAll('"first_chunk_ms"', '"ttfc_ms"'));
  const [o] = readTrace(old).requests;
  assert.equal(o!.response.first_chunk_ms, firstChunk);
  assert.ok(!('ttfc_ms' in o!.response));
  assert.deepEqual(o, r);
});
