// Pasting a command line roundload printed into a shell, as a user would, in a throwaway folder: the commands it
// names (roundload, node, sh, grep, sqlite3) are functions that print the words they got, so the test sees how
// the shell split the line and runs nothing of it; whatever the line runs on its own shows as a file created.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';

/** The commands a printed line names, each replaced by a function printing its words NUL-separated. */
const STAND_INS = ['roundload', 'node', 'sh', 'grep', 'sqlite3'].map((name) => `${name}() { printf '%s\\0' ${name} "$@"; }`).join('\n');

export interface Pasted {
  /** The words of every command the line ran (of the stand-ins), in order. */
  words: string[];
  /** Files in `cwd` after the paste (a throwaway folder: none expected). */
  created: string[];
  code: number | null;
  stderr: string;
}

/** `line` as if pasted into `shell` (bash by default) in the empty folder `cwd`. Bounded: 10 s. SHLVL is set: a
 * bash started without it took about half a second here, against 3 ms. */
export function paste(line: string, cwd: string, shell = 'bash'): Pasted {
  const r = spawnSync(shell, ['-c', `${STAND_INS}\n${line}`], { cwd, encoding: 'utf8', timeout: 10_000, env: { PATH: process.env.PATH, LC_ALL: 'C.UTF-8', SHLVL: '1' } });
  return { words: r.stdout.split('\0').slice(0, -1), created: readdirSync(cwd), code: r.status, stderr: r.stderr };
}
