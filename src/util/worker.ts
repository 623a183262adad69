// Worker threads and child processes on a module beside the caller: the compiled `.js` in a build, the `.ts`
// source through tsx's hooks when roundload runs from source (tests, `node --import tsx src/cli.ts`).
import { Worker } from 'node:worker_threads';
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

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

/**
 * Starts a child process on `./<stem>.js` (or `.ts`) next to `from`, with an IPC channel as fd 3: for work
 * that must be killable while it blocks in a system call (a thread stuck in write(2) cannot be ended, and
 * keeps its process from exiting). From source, the entry is loaded through tsx's require hook (the same
 * limits as `spawnModuleWorker`'s `require`). `stdio` gives fds 0-2.
 */
export function spawnModuleProcess(from: string, stem: string, stdio: readonly ['pipe' | 'ignore', 'pipe' | 'ignore', 'pipe' | 'ignore']): ChildProcess {
  const options = { stdio: [...stdio, 'ipc'] as StdioOptions, windowsHide: true };
  if (!from.endsWith('.ts')) return spawn(process.execPath, [fileURLToPath(new URL(`./${stem}.js`, from))], options);
  const tsx = createRequire(from).resolve('tsx/cjs/api');
  const entry = fileURLToPath(new URL(`./${stem}.ts`, from));
  return spawn(process.execPath, ['-e', `require(${JSON.stringify(tsx)}).register(); require(${JSON.stringify(entry)});`], options);
}
