// What a command prints beside its data: one line each on stderr, whatever the line quotes (a server's message,
// a run folder's name or status, a trace's upstream) kept on it, without the controls it may hold (util/text.ts).
import { oneLine } from '../util/index.js';

/** Writes one log line to stderr. */
export function logLine(line: string): void {
  process.stderr.write(`${oneLine(line)}\n`);
}
