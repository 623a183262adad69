// Where the repository is and how a test starts roundload, the same whether the tests run compiled
// (`npm test`: tsc emits test/ and src/ into dist/, and each file runs as plain JavaScript) or from source
// (`node --import tsx --test test/x.test.ts`, as a developer runs one file).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** True when this file runs compiled (dist/test/helpers/root.js), so the CLI to start is dist/src/cli.js. */
export const COMPILED = import.meta.url.endsWith('.js');

function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 8 && !existsSync(join(dir, 'package.json')); i += 1) dir = dirname(dir);
  return `${dir}/`;
}

/** The repository's root folder, with a trailing slash (dist/ has no package.json, so a compiled test finds the same one). */
export const ROOT = findRoot();

/** `node` arguments that start `roundload ARGS`: the built CLI when the tests are compiled (it was compiled with
 * them, from the same sources), else the source through tsx. */
export function cliArgs(...args: readonly string[]): string[] {
  return COMPILED ? [join(ROOT, 'dist/src/cli.js'), ...args] : ['--import', 'tsx', join(ROOT, 'src/cli.ts'), ...args];
}

/** `cliArgs` as one shell command line (for tests that run a script as a container or a terminal would). */
export function cliCommand(): string {
  return [process.execPath, ...cliArgs()].map((a) => JSON.stringify(a)).join(' ');
}

/** A source module as this mode loads it, given by its .ts URL relative to the calling test
 * (`new URL('../../src/commands/index.ts', import.meta.url)`, which compiled points into dist/src/): its
 * compiled .js, or the .ts itself. */
export function sourceModule(url: URL): string {
  return COMPILED ? url.href.replace(/\.ts$/, '.js') : url.href;
}
