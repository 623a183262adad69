// What starting an embedded deployment takes and what describes its servers; shared by the in-process start
// (index.ts) and the thread that hosts one for a run (thread.ts).
import type { EngineSettings } from '../config/index.js';

export type EngineTopology = EngineSettings['topology'];
export type EngineServerName = 'router' | 'prefill' | 'decode' | 'engine';

export interface EngineOptions {
  settings: EngineSettings;
  /** Address every server listens on. @default "127.0.0.1" */
  host?: string;
  /** Port of the entry server (the router in `pd`, the engine in `single`); 0 picks a free one. @default 0 */
  port?: number;
  /** PD: the prefill server's port. @default 0 */
  prefillPort?: number;
  /** PD: the decode server's port. @default 0 */
  decodePort?: number;
  /** PD: the router's Prometheus port (29000 on a real router). @default 0 */
  routerMetricsPort?: number;
  /** Model name served by /v1/models and echoed when a request names none. @default "deepseek-v4-flash" */
  modelName?: string;
  /** Folder of the servers' log files (`router.log`, `prefill.log`, `decode.log`, or `engine.log`); null keeps
   * them in memory only. @default null */
  logDir?: string | null;
  /** Record each request's trace on every server, as SGLang's `--enable-trace` (router, prefill and decode
   * spans, parented on the incoming `traceparent`); the handle's `traces` gives them out. @default false */
  trace?: boolean;
}

/** One server of the deployment. */
export interface EngineServerInfo {
  readonly name: EngineServerName;
  /** Its HTTP address (the router's API port for the router). */
  readonly url: string;
  /** Where its Prometheus series are (the router's own metrics port for the router). */
  readonly metricsUrl: string;
  /** Its log file, or null when logs stay in memory. */
  readonly logFile: string | null;
}
