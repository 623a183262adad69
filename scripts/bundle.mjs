// The CLI as shipped (package.json's bin, `npm start`): one esbuild bundle per entry point in dist/bin/ — the
// CLI and the modules it starts as threads or processes — with what only some commands load (the commands
// themselves, the embedded engine, the hop, the history…) split into chunks that load when used, as cli.ts's
// lazy imports ask. Node's ESM loader costs per module: a run loaded ~270 of them one by one (bench/README.md,
// start-up). The tests run tsc's dist/src/ instead (the same code, module by module); test/e2e/bundle.test.ts
// runs this bundle.
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';

const OUT = 'dist/bin';

/** Left in node_modules: a native addon (better-sqlite3), a package read as files at run time (uplot,
 * report/assets.ts), and the CommonJS packages src/ loads with import() (the hop's certificates, the metrics
 * export, remote write): from a chunk, esbuild gives such a module a default export only, where Node gives its
 * named ones too (`const { generate } = await import('selfsigned')`). test/e2e/bundle.test.ts checks every
 * package src/ imports with import() is listed here. */
const EXTERNAL = ['better-sqlite3', 'uplot', 'selfsigned', 'prom-client', 'snappyjs'];

/** The newest modification time among the bundle's inputs: src/, this script, package.json and the lock. */
function newestInputMs() {
  const files = ['scripts/bundle.mjs', 'package.json', 'package-lock.json'];
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) (e.isDirectory() ? walk : (f) => files.push(f))(join(dir, e.name));
  };
  walk('src');
  return Math.max(...files.filter((f) => existsSync(f)).map((f) => statSync(f).mtimeMs));
}

// `--if-changed` (npm start): nothing to do when the bundle is newer than every input, as tsc -b's no-op.
if (process.argv.includes('--if-changed') && existsSync(join(OUT, 'cli.js')) && statSync(join(OUT, 'cli.js')).mtimeMs > newestInputMs()) process.exit(0);

const { build } = await import('esbuild'); // after the check: loading esbuild is most of a no-op's time

/** zod's `z.locales`: error messages in 60-odd languages, a third of the bundle's largest chunk, parsed at every
 * start. roundload uses none of them (zod's English default is imported on its own, `locales/en.js`), so the
 * namespace is bundled empty. */
const noZodLocales = {
  name: 'no-zod-locales',
  setup(b) {
    b.onResolve({ filter: /\/locales\/index\.js$/ }, (args) => (/[\\/]zod[\\/]/.test(args.importer) ? { path: 'zod-locales', namespace: 'empty' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'empty' }, () => ({ contents: 'export {};', loader: 'js' }));
  },
};

/** undici's dispatchers and hdr-histogram-js's histogram are loaded from their own files, not the packages'
 * indexes, through a `require` made by createRequire (src/transport/undici.ts, src/metrics/histogram.ts). In
 * the bundle, that line goes: the bare `require()` calls left are esbuild's to bundle, so ~180 CommonJS files
 * are not resolved and read one by one at start (about 4% of a 1-agent run's CPU). Without the line (say it
 * changed) nothing breaks: they load from node_modules as before. */
const bundleOwnRequires = {
  name: 'bundle-own-requires',
  setup(b) {
    b.onLoad({ filter: /[\\/]src[\\/](transport[\\/]undici|metrics[\\/]histogram)\.ts$/ }, (args) => ({
      contents: readFileSync(args.path, 'utf8').replace(/^const require = createRequire\(import\.meta\.url\);$/m, ''),
      loader: 'ts',
    }));
  },
};

rmSync(OUT, { recursive: true, force: true }); // chunk names carry a hash: no stale ones left beside new ones
await build({
  entryPoints: {
    cli: 'src/cli.ts',
    'worker-entry': 'src/run/worker-entry.ts',
    'thread-entry': 'src/engine/thread-entry.ts',
    'writer-thread': 'src/results/writer-thread.ts',
    'writer-process': 'src/trace/writer-process.ts',
  },
  outdir: OUT,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Flat: a chunk's import.meta.url finds the entries beside it (`new URL('./writer-thread.js', import.meta.url)`).
  chunkNames: '[name]-[hash]',
  external: EXTERNAL,
  // The bundled CommonJS packages call require() for Node's own modules, which an ES module lacks.
  banner: { js: "import { createRequire as __roundloadCreateRequire } from 'node:module'; const require = __roundloadCreateRequire(import.meta.url);" },
  plugins: [noZodLocales, bundleOwnRequires],
  sourcemap: true,
  // Whitespace and syntax only, names kept (stack traces stay readable): 2.9 → 2.1 MB of JavaScript that Node
  // reads, decodes and parses at every start (callgrind, `roundload validate`: 3% fewer instructions).
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
});
