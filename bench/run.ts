// `npm run bench -- <name> [args…]`: runs one benchmark by name (no name: lists them). Benchmarks print
// their figures; the ones with a pass/fail claim (soak: flat memory) also set the exit code.
import { soakBench } from './soak.js';

const BENCHES: Record<string, { about: string; run: (args: string[]) => Promise<number> }> = {
  soak: { about: '≥ 200k requests on the embedded engine with zero delays; RSS at start, middle and end (end within 10% of middle)', run: soakBench },
};

const [name, ...args] = process.argv.slice(2);
const bench = name === undefined ? undefined : BENCHES[name];
if (bench === undefined) {
  process.stderr.write(`${name === undefined ? '' : `unknown benchmark "${name}"\n`}usage: npm run bench -- <name> [args]\n${Object.entries(BENCHES).map(([n, b]) => `  ${n.padEnd(8)} ${b.about}`).join('\n')}\n`);
  process.exitCode = name === undefined ? 0 : 2;
} else {
  process.exitCode = await bench.run(args);
}
