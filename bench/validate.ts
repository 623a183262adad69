// Validate: how long `roundload validate` takes on large workload files (up to the 1 MiB limit), beside the
// time yaml's lexer takes just to tokenize the same text (linear: the floor any validation pays).
import { performance } from 'node:perf_hooks';
import { Lexer } from 'yaml';
import { parseWorkload } from '../src/config/index.js';
import { printTable } from './lib.js';

const MIB = 1024 * 1024;

/** `count` lines made by `line(i)` after `head`, or as many as fit in `maxBytes`. */
function build(head: string, line: (i: number) => string, count: number, maxBytes = MIB): string {
  const parts = [head];
  let bytes = head.length;
  for (let i = 0; i < count; i += 1) {
    const next = line(i);
    if (bytes + next.length > maxBytes) break;
    parts.push(next);
    bytes += next.length;
  }
  return parts.join('');
}

function fastestMs(work: () => void, times: number): number {
  let best = Infinity;
  for (let i = 0; i < times; i += 1) {
    const started = performance.now();
    work();
    best = Math.min(best, performance.now() - started);
  }
  return best;
}

export function validateBench(): void {
  const cases: [string, string][] = [
    ['4k labels', build('labels:\n', (i) => `  k${i}: v${i}\n`, 4_000)],
    ['40k labels', build('labels:\n', (i) => `  k${i}: v${i}\n`, 40_000)],
    ['40k stray keys', build('', (i) => `key${i}: ${i}\n`, 40_000)],
    ['1 MiB of labels', build('labels:\n', (i) => `  ${i.toString(36)}: 1\n`, Infinity)],
    ['1 MiB of stray keys', build('', (i) => `${i.toString(36)}: 1\n`, Infinity)],
    ['1 MiB flow mapping', `${build('labels: {', (i) => `${i.toString(36)}: 1, `, Infinity, MIB - 8)}z: 1}\n`],
  ];
  const rows: (string | number)[][] = [];
  for (const [name, text] of cases) {
    let keys = 0;
    let problems = 0;
    const lexMs = fastestMs(() => {
      keys = 0;
      for (const token of new Lexer().lex(text)) if (token === ':') keys += 1;
    }, 3);
    const validateMs = fastestMs(() => {
      try {
        parseWorkload(text, 'bench.yaml');
        problems = 0;
      } catch (error) {
        problems = (error as { issues?: unknown[] }).issues?.length ?? -1;
      }
    }, 3);
    rows.push([name, Math.round(text.length / 1024), keys, problems, Math.round(lexMs), Math.round(validateMs), Number((validateMs / lexMs).toFixed(1))]);
  }
  printTable('validate: large workload files (fastest of 3)', ['file', 'KiB', 'keys', 'problems shown', 'lex ms', 'validate ms', '× lex'], rows);
}
