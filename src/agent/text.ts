// Seeded filler text sized in tokens (about 4 characters per token, the engine's and most tokenizers' rule
// of thumb), looking like what agents exchange: code, paths, logs.
import type { Rng } from '../util/index.js';

/** The filler's words: code, paths, log words; none that JSON escapes (the replay's synthetic text uses them too). */
export const FILLER_WORDS = [
  'the',
  'function',
  'returns',
  'a',
  'value',
  'when',
  'config',
  'is',
  'loaded',
  'from',
  'disk',
  'and',
  'cache',
  'hit',
  'miss',
  'request',
  'handler',
  'stream',
  'token',
  'buffer',
  'socket',
  'retry',
  'timeout',
  'error',
  'ok',
  'src/main.ts',
  'lib/util.py',
  'server.go',
  'test',
  'assert',
  'expected',
  'got',
  'line',
  'column',
  'import',
  'export',
  'class',
  'async',
  'await',
  'promise',
  'resolve',
  'queue',
  'batch',
  'decode',
  'prefill',
  'kv',
  'page',
  'router',
  'proxy',
  'tls',
  'health',
  'metric',
  'gauge',
  'counter',
  'latency',
  'p99',
  'user',
  'agent',
  'tool',
  'call',
  'result',
  'read',
  'write',
  'file',
  'path',
  'git',
  'diff',
  'commit',
  'branch',
  'merge',
  'build',
  'run',
] as const;

/** About `tokens` tokens of text (±1 word), deterministic for a given generator state. */
export function filler(rng: Rng, tokens: number): string {
  const targetChars = Math.max(1, tokens) * 4;
  const parts: string[] = [];
  let chars = 0;
  let sinceBreak = 0;
  while (chars < targetChars) {
    const w = rng.pick(FILLER_WORDS);
    parts.push(w);
    chars += w.length + 1;
    sinceBreak += 1;
    if (sinceBreak > 12 && rng.next() < 0.15) {
      parts.push('\n');
      sinceBreak = 0;
    }
  }
  return parts.join(' ');
}

/** The client's token estimate, used only when the server sends no usage (and then marked estimated). */
export function estimateTokens(text: string): number {
  return estimateTokensOfChars(text.length);
}

/** `estimateTokens` of a text of `chars` characters. */
export function estimateTokensOfChars(chars: number): number {
  return Math.ceil(chars / 4);
}
