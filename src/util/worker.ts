// Worker threads on a module beside the caller: the compiled `.js` in a build, the `.ts` source through tsx's
// hooks when roundload runs from source (tests, `node --import tsx src/cli.ts`).
import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';

/**
 * Starts a worker thread on `./<stem>.js` (or `.ts`) next to `from` (the caller's `import.meta.url`).
 * @param options.require from source, load the entry through tsx's require hook: in-thread, about half the
 * start-up CPU of its import hooks (which start a thread of their own); only for an entry whose module graph
 * uses no `import.meta` and no ESM-only package. @default false
 */
export function spawnModuleWorker(from: string, stem: string, workerData: unknown, options: { require?: boolean } = {}): Worker {
  if (!from.endsWith('.ts')) return new Worker(new URL(`./${stem}.js`, from), { workerData });
  const entry = new URL(`./${stem}.ts`, from);
  if (options.require === true) {
    const tsx = createRequire(from).resolve('tsx/cjs/api');
    return new Worker(`require(${JSON.stringify(tsx)}).register(); require(${JSON.stringify(entry.pathname)});`, { eval: true, workerData });
  }
  const tsx = import.meta.resolve('tsx/esm/api');
  const code = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry.href)}); })`;
  return new Worker(code, { eval: true, workerData });
}
