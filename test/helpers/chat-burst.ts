// Test helper: a burst of streaming chat requests, some lanes at a time, each bounded, as a harness sends them
// through a proxy; how many were answered whole (200 and `[DONE]`) within their bound.
import { request } from 'undici';

const chat = (n: number): string =>
  JSON.stringify({
    model: 'm',
    stream: true,
    stream_options: { include_usage: true },
    messages: [
      { role: 'system', content: 'you are a helpful agent '.repeat(20) },
      { role: 'user', content: `conversation ${n}: please explain the parser` },
      { role: 'assistant', content: 'it reads bytes' },
      { role: 'user', content: 'and then?' },
    ],
  });

/** Sends `count` streaming chat requests to `url`, `lanes` at a time, each bounded by `timeoutMs` (headers and
 * body); resolves with how many were answered whole. A request past its bound rejects the burst. */
export async function chatBurst(url: string, count: number, options: { lanes?: number; timeoutMs?: number } = {}): Promise<number> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  let next = 0;
  let answered = 0;
  const lane = async (): Promise<void> => {
    while (next < count) {
      next += 1;
      const res = await request(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: chat(next),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const text = await res.body.text();
      if (res.statusCode === 200 && text.includes('[DONE]')) answered += 1;
    }
  };
  await Promise.all(Array.from({ length: options.lanes ?? 8 }, lane));
  return answered;
}

/** `GET /v1/models` through `url`, bounded; its status. */
export async function modelsStatus(url: string, timeoutMs = 10_000): Promise<number> {
  const res = await request(`${url}/v1/models`, { headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  await res.body.text();
  return res.statusCode;
}
