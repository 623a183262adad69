// The embedded engine's public face: an in-process, SGLang-like OpenAI-compatible server (streaming, tool calls,
// prefix cache, batch-scheduler latency, /metrics). Code outside src/engine imports only this file.
import type { EngineSettings } from '../config/schema.js';
import { createEngineServer } from './server.js';
import { EngineState, type EngineStats } from './state.js';

export type { EngineStats } from './state.js';

export interface EngineOptions {
  settings: EngineSettings;
  /** Address to listen on. @default "127.0.0.1" */
  host?: string;
  /** Port to listen on; 0 picks a free one. @default 0 */
  port?: number;
  /** Model name served by /v1/models and echoed when a request names none. @default "deepseek-v4-flash" */
  modelName?: string;
}

export interface EngineHandle {
  /** Base URL, e.g. `http://127.0.0.1:30000`. */
  url: string;
  port: number;
  /** Stops the engine: drops every job and destroys every socket, streaming ones included; resolves within about 1 s. */
  close(): Promise<void>;
  stats(): EngineStats;
}

/** Bound on close(): sockets are destroyed at once, this only covers a server that never reports closed. */
const CLOSE_BOUND_MS = 1_000;

export function startEngine(opts: EngineOptions): Promise<EngineHandle> {
  const host = opts.host ?? '127.0.0.1';
  const state = new EngineState(opts.settings, opts.modelName ?? 'deepseek-v4-flash');
  const server = createEngineServer(state);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : (opts.port ?? 0);
      let closing: Promise<void> | null = null;
      resolve({
        url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
        port,
        stats: () => state.stats(),
        close: () =>
          (closing ??= new Promise<void>((done) => {
            state.scheduler.stop();
            // Hung and stalled responses too: their sockets go with closeAllConnections, their timers here.
            state.faults.close();
            const bound = setTimeout(done, CLOSE_BOUND_MS);
            bound.unref();
            server.close(() => {
              clearTimeout(bound);
              done();
            });
            server.closeAllConnections();
          })),
      });
    });
  });
}
