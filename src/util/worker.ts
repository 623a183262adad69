// Worker threads on a module beside the caller: the compiled `.js` in a build, the `.ts` source through tsx's
// hooks when roundload runs from source (tests, `node --import tsx src/cli.ts`).
import { Worker } from 'node:worker_threads';

/** Starts a worker thread on `./<stem>.js` (or `.ts`) next to `from` (the caller's `import.meta.url`). */
export function spawnModuleWorker(from: string, stem: string, workerData: unknown): Worker {
  if (from.endsWith('.ts')) {
    const entry = new URL(`./${stem}.ts`, from).href;
    const tsx = import.meta.resolve('tsx/esm/api');
    const code = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); })`;
    return new Worker(code, { eval: true, workerData });
  }
  return new Worker(new URL(`./${stem}.js`, from), { workerData });
}
