// `probePath`: the four measurements of a path before a run. A first GET of `/v1/models` proves the target
// answers (and names the model); the idle check then runs beside the stream and read checks (all three
// mostly wait), and the body check comes last, alone: parsing a 64 MiB body can stall a server's event loop
// long enough for its idle timers to fire late and close a connection a request had just reached.
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { TargetUnreachableError } from '../errors.js';
import { failure, type PathClient } from './exchange.js';
import { gapTrial, measureIdle, type IdleResult } from './idle.js';
import { measureRead, type ReadResult } from './read.js';
import { measureStream, type StreamResult } from './stream.js';
import { bodyTrial, searchBody, type BodyResult } from './body.js';

export const CHECKS = ['idle', 'read', 'stream', 'body'] as const;
export type Check = (typeof CHECKS)[number];

export interface ProbeOptions {
  /** The URL requests go to (the proxy, or the hop), for messages. */
  url: string;
  /** `direct`, `hop` or `proxy` (a CONNECT proxy), for the report. */
  path: string;
  /** The model to ask for; null: the first one `/v1/models` lists. */
  model: string | null;
  /** @default 75 s */
  maxIdleMs: number;
  /** @default 60 s */
  maxHoldMs: number;
  skip: ReadonlySet<Check>;
}

export interface ProbeReport {
  url: string;
  path: string;
  model: string;
  /** null: skipped. */
  idle: IdleResult | null;
  read: ReadResult | null;
  stream: StreamResult | null;
  body: BodyResult | null;
  elapsedMs: number;
}

const MODELS_PATH = '/v1/models';

/** The model to use: the one asked for, else the first `/v1/models` lists. @throws TargetUnreachableError */
async function firstContact(client: PathClient, options: ProbeOptions): Promise<string> {
  const x = await client.connection().send({ method: 'GET', path: MODELS_PATH }, { timeoutMs: 10_000 });
  if (x.status === null) throw new TargetUnreachableError(options.url, { detail: failure(x) });
  if (options.model !== null) return options.model;
  try {
    const listed = JSON.parse(x.chunks.map((c) => c.text).join('')) as { data?: { id?: unknown }[] };
    const id = listed.data?.[0]?.id;
    if (typeof id === 'string') return id;
  } catch {
    // not a model list: fall through
  }
  return 'default';
}

export async function probePath(client: PathClient, options: ProbeOptions, onProgress: (line: string) => void): Promise<ProbeReport> {
  const startedMs = performance.now();
  const model = await firstContact(client, options);
  onProgress(`probing ${options.url} (${options.path}), model ${model}`);
  let keepAlive: string | null = null;
  const idle = options.skip.has('idle')
    ? Promise.resolve(null)
    : measureIdle(
        { maxIdleMs: options.maxIdleMs },
        {
          tryGap: gapTrial(
            client,
            { url: options.url, path: MODELS_PATH },
            (ms) => sleep(ms),
            (x) => (keepAlive ??= x.headers['keep-alive'] ?? null),
          ),
          nowMs: () => performance.now(),
          onProgress,
          keepAliveHeader: () => keepAlive,
        },
      );
  const others = (async () => {
    const stream = options.skip.has('stream') ? null : await measureStream(client.connection(), { model, timeoutMs: Math.max(30_000, options.maxHoldMs), onProgress });
    const read = options.skip.has('read') ? null : await measureRead(client.connection(), { model, maxHoldMs: options.maxHoldMs, onProgress });
    return { stream, read };
  })();
  // Both run to the end even when one fails, so no request is left behind the client's close.
  const [idleDone, othersDone] = await Promise.allSettled([idle, others]);
  if (idleDone.status === 'rejected') throw idleDone.reason as Error;
  if (othersDone.status === 'rejected') throw othersDone.reason as Error;
  const body = options.skip.has('body') ? null : await searchBody({}, bodyTrial(client, model, onProgress));
  return { url: options.url, path: options.path, model, idle: idleDone.value, ...othersDone.value, body, elapsedMs: Math.round(performance.now() - startedMs) };
}
