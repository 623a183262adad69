// Micro benchmark of the stream hot path: ChatStreamParser (+ MessageAssembler) over a captured-like SGLang
// body of 10k content chunks, fed one SSE event per network chunk and in 64 KiB pieces.
// Run: node --import tsx bench/stream-parse.ts

import { ChatStreamParser, MessageAssembler, type StreamEvent } from '../src/stream/index.js';

const CHUNKS = 10_000;
const RUNS = 7;
const H = '{"id":"9f4c1e2a7b3d4c5e8f60a1b2c3d4e5f6","object":"chat.completion.chunk","created":1733151234,"model":"deepseek-ai/DeepSeek-V3"';
const WORDS = [' the', ' load', ' test', ' of', ' a', ' tool', '-calling', ' agent', ' 世界', ' 👋', ' round', ' trip', ','];

function chunk(delta: string, finish: string | null): string {
  return `data: ${H},"choices":[{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finish === null ? 'null' : `"${finish}"`},"matched_stop":null}],"usage":null}\n\n`;
}

/** One string per SSE event, as a server flushes them. */
function buildEvents(): string[] {
  const out = [chunk('{"role":"assistant","content":"","reasoning_content":null,"tool_calls":null}', null)];
  for (let i = 0; i < CHUNKS; i++) {
    const word = WORDS[i % WORDS.length] ?? ' x';
    out.push(chunk(`{"role":null,"content":${JSON.stringify(word)},"reasoning_content":null,"tool_calls":null}`, null));
  }
  out.push(chunk('{"role":null,"content":null,"reasoning_content":null,"tool_calls":null}', 'stop'));
  out.push(`data: ${H},"choices":[],"usage":{"prompt_tokens":2048,"total_tokens":12048,"completion_tokens":${CHUNKS},"prompt_tokens_details":{"cached_tokens":1024}}}\n\n`);
  out.push('data: [DONE]\n\n');
  return out;
}

function slice(body: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < body.length; at += size) out.push(body.subarray(at, at + size));
  return out;
}

interface Figure {
  events: number;
  ms: number;
}

function runOnce(pieces: readonly Buffer[], assemble: boolean): Figure {
  let events = 0;
  const assembler = new MessageAssembler();
  const onEvent = assemble
    ? (e: StreamEvent): void => {
        events++;
        assembler.apply(e);
      }
    : (): void => {
        events++;
      };
  const t0 = performance.now();
  const parser = new ChatStreamParser(onEvent);
  for (let i = 0; i < pieces.length; i++) {
    const piece = pieces[i];
    if (piece !== undefined) parser.feed(piece);
  }
  parser.end();
  if (assemble) assembler.result();
  return { events, ms: performance.now() - t0 };
}

/** Reference floor: JSON.parse of each data payload alone, nothing else. */
function jsonOnly(events: readonly string[]): Figure {
  const t0 = performance.now();
  let n = 0;
  for (const e of events) {
    const data = e.slice(6, -2);
    if (data !== '[DONE]') JSON.parse(data);
    n++;
  }
  return { events: n, ms: performance.now() - t0 };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

function measure(label: string, run: () => Figure, bytes: number): void {
  for (let i = 0; i < 3; i++) run(); // warm up the JIT
  const figures: Figure[] = [];
  for (let i = 0; i < RUNS; i++) figures.push(run());
  const ms = median(figures.map((f) => f.ms));
  const events = figures[0]?.events ?? 0;
  const perSec = (events / ms) * 1000;
  console.log(
    `${label.padEnd(46)} ${String(events).padStart(6)} events  ${ms.toFixed(2).padStart(7)} ms  ` +
      `${Math.round(perSec).toLocaleString('en-US').padStart(10)} events/s  ${((1000 * ms) / events).toFixed(2)} µs/event  ` +
      `${(bytes / 1048576 / (ms / 1000)).toFixed(0)} MiB/s`,
  );
}

const events = buildEvents();
const perEvent = events.map((e) => Buffer.from(e, 'utf8'));
const body = Buffer.concat(perEvent);
const big = slice(body, 64 * 1024);

console.log(`node ${process.version}; body ${(body.length / 1024).toFixed(0)} KiB, ${events.length} SSE events, median of ${RUNS} runs`);
measure('JSON.parse only (floor)', () => jsonOnly(events), body.length);
measure('parser, 1 SSE event per network chunk', () => runOnce(perEvent, false), body.length);
measure('parser, 64 KiB pieces', () => runOnce(big, false), body.length);
measure('parser + assembler, 1 SSE event per chunk', () => runOnce(perEvent, true), body.length);
measure('parser + assembler, 64 KiB pieces', () => runOnce(big, true), body.length);
