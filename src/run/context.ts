// The one place that builds what agents run with, for the main thread and worker threads alike: the
// transport (its deadlines backing the watchdog up) and the phase context around it.
import { resolveTools, systemPrompt } from '../agent/index.js';
import type { Workload } from '../config/index.js';
import { Transport, type TlsOptions } from '../transport/index.js';
import type { PathKind } from '../types/index.js';
import { backstopTimeouts } from '../watchdog/index.js';
import type { PhaseRunContext } from './phase.js';

/** Where the requests go: the URL, the path kind, TLS and a CONNECT proxy. */
export interface TransportRoute {
  url: string;
  path: PathKind;
  tls: TlsOptions;
  connectProxy: string | null;
}

/** How many lanes this thread needs, and what differs from the workload's own connection settings. */
export interface TransportLanes {
  agents: number;
  poolConnections: number | null;
  /** @default workload.agents.connection */
  connection?: 'pool' | 'per-agent';
  /** @default workload.agents.keep_alive_timeout_ms */
  keepAliveTimeoutMs?: number;
}

/** The transport of one thread of a run. */
export function runTransport(workload: Workload, route: TransportRoute, lanes: TransportLanes): Transport {
  const w = workload.watchdog;
  return new Transport({
    url: route.url,
    path: route.path,
    tls: route.tls,
    connectProxy: route.connectProxy,
    connection: lanes.connection ?? workload.agents.connection,
    agents: lanes.agents,
    poolConnections: lanes.poolConnections,
    keepAliveTimeoutMs: lanes.keepAliveTimeoutMs ?? workload.agents.keep_alive_timeout_ms,
    connectTimeoutMs: w.connect_ms,
    // undici's deadlines only back the watchdog up and must never fire first.
    ...backstopTimeouts(w),
  });
}

/** The phase context of one thread: what the thread brings, plus what follows from the workload and transport. */
export function phaseContext(parts: Omit<PhaseRunContext, 'endpoint' | 'system' | 'tools' | 'conversations'>): PhaseRunContext {
  return {
    ...parts,
    endpoint: `${parts.transport.basePath}/v1/chat/completions`,
    system: systemPrompt(parts.workload.conversation),
    tools: resolveTools(parts.workload.conversation.tools),
    conversations: new Map(),
  };
}
