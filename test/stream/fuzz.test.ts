// The parser faces whatever a proxy or a broken server sends: it must never throw, and must stay
// independent of how the bytes were cut even on garbage.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runPieces, runWhole } from './collect.js';
import { ALL_FIXTURES } from './fixtures.js';
import { Rng } from '../../src/util/index.js';

/** The project's seeded generator, so a failing case can be replayed from its seed. */
function prng(seed: number): () => number {
  const rng = new Rng(seed);
  return () => rng.next();
}

/** Pieces of SSE and chunk syntax, plus bytes that are not valid UTF-8 on their own. */
const TOKENS: readonly (string | number[])[] = [
  'data: ',
  'data:',
  'event: x\n',
  'id: 1\n',
  'retry: x\n',
  ': ping',
  '\n',
  '\n\n',
  '\r',
  '\r\n',
  ':',
  ' ',
  '{',
  '}',
  '[',
  ']',
  '"',
  ',',
  'null',
  '[DONE]',
  '{"choices":[{"delta":',
  '{"content":"a"}',
  '"tool_calls":[{"index":',
  '{"error":{"message":"x"}}',
  '{"usage":{"prompt_tokens":1,"completion_tokens":2}}',
  '"finish_reason":"stop"}]}',
  '👋',
  '世',
  [0xff],
  [0xc3],
  [0xf0, 0x9f],
  [0xe4, 0xb8],
  [0x80],
  [0xef, 0xbb, 0xbf],
  [0x00],
];

function tokenSoup(random: () => number): Buffer {
  const parts: Buffer[] = [];
  const count = 1 + Math.floor(random() * 40);
  for (let i = 0; i < count; i++) {
    const token = TOKENS[Math.floor(random() * TOKENS.length)] ?? '';
    parts.push(typeof token === 'string' ? Buffer.from(token, 'utf8') : Buffer.from(token));
  }
  return Buffer.concat(parts);
}

function randomBytes(random: () => number): Buffer {
  const out = Buffer.alloc(Math.floor(random() * 300));
  for (let i = 0; i < out.length; i++) out[i] = Math.floor(random() * 256);
  return out;
}

/** A fixture with a few bytes overwritten, so the garbage sits inside realistic structure. */
function damagedFixture(random: () => number): Buffer {
  const fixture = ALL_FIXTURES[Math.floor(random() * ALL_FIXTURES.length)];
  const out = Buffer.from(fixture?.body ?? '', 'utf8');
  const hits = 1 + Math.floor(random() * 4);
  for (let i = 0; i < hits && out.length > 0; i++) out[Math.floor(random() * out.length)] = Math.floor(random() * 256);
  return out;
}

function randomPieces(bytes: Buffer, random: () => number): Buffer[] {
  const pieces: Buffer[] = [];
  let at = 0;
  while (at < bytes.length) {
    const size = 1 + Math.floor(random() * 16);
    pieces.push(bytes.subarray(at, at + size));
    at += size;
  }
  return pieces;
}

describe('ChatStreamParser on garbage', () => {
  it('never throws on 2000 seeded random buffers and cuts them anywhere without changing the result', () => {
    const makers = [tokenSoup, randomBytes, damagedFixture];
    for (let seed = 1; seed <= 2000; seed++) {
      const random = prng(seed);
      const make = makers[seed % makers.length] ?? tokenSoup;
      const bytes = make(random);
      const whole = runWhole(bytes);
      const cut = runPieces(randomPieces(bytes, random));
      assert.deepEqual(cut, whole, `seed ${seed}: ${bytes.toString('hex').slice(0, 400)}`);
      for (const e of whole.events) {
        if (e.kind === 'malformed') assert.ok(e.sample.length <= 200, `seed ${seed}: sample too long`);
      }
    }
  });
});
