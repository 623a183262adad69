// The network path of a run, decided once from `target.via`: where agent requests go, with which TLS, through
// which CONNECT proxy, and the direct URL around it for canaries. Starts the built-in hop when asked.
import type { Workload } from '../config/index.js';
import type { HopFaultFired, HopHandle } from '../hop/index.js';
import type { TlsOptions } from '../transport/index.js';
import type { PathKind } from '../types/index.js';
import { readFileSync } from 'node:fs';
import { UsageError } from '../errors.js';

/** What services (canaries, the monitor) need to know about the path. */
export interface RouteInfo {
  readonly path: PathKind;
  /** Where agent requests go: the target, the hop, or the TLS proxy. */
  readonly requestUrl: string;
  /** TLS settings for `requestUrl` (inside the tunnel when there is a CONNECT proxy). */
  readonly tls: TlsOptions;
  /** HTTP CONNECT proxy the requests tunnel through, or null. */
  readonly connectProxy: string | null;
  /** The engine itself (the embedded one, or `target.url`). */
  readonly engineUrl: string;
  /** The engine reached directly, around any proxy, for canaries; null when there is none to take. */
  readonly bypassUrl: string | null;
  readonly bypassTls: TlsOptions;
}

export interface Route extends RouteInfo {
  /** The built-in hop, when the run started one. */
  readonly hop: HopHandle | null;
  /** One line for the log: the path and where it goes. */
  readonly description: string;
  /** Stops the hop (bounded); idempotent. */
  close(): Promise<void>;
}

export interface RouteHooks {
  /** A hop fault acted (the run writes a `hop_fault` event). */
  onFault?: (fired: HopFaultFired) => void;
}

/**
 * Opens the path to `engineUrl` (the resolved target) that the workload asks for.
 * @throws ServerStartError when the hop cannot start.
 */
export async function openRoute(workload: Workload, engineUrl: string, hooks: RouteHooks = {}): Promise<Route> {
  const t = workload.target;
  const targetTls: TlsOptions = { caFile: t.tls.ca, insecure: t.tls.insecure, servername: t.tls.servername };
  const via = t.via;
  const common = { engineUrl, bypassTls: targetTls, hop: null, close: async () => {} };
  if (via === null) {
    return { ...common, path: 'direct', requestUrl: engineUrl, tls: targetTls, connectProxy: null, bypassUrl: t.bypass, description: `direct to ${engineUrl}` };
  }
  if (via.kind === 'connect') {
    return { ...common, path: 'proxy', requestUrl: engineUrl, tls: targetTls, connectProxy: via.url, bypassUrl: t.bypass, description: `${engineUrl} through the CONNECT proxy ${via.url}` };
  }
  if (via.kind === 'tls-proxy') {
    return { ...common, path: 'proxy', requestUrl: via.url, tls: targetTls, connectProxy: null, bypassUrl: t.bypass ?? engineUrl, description: `through the TLS proxy ${via.url} to ${engineUrl}` };
  }
  let upstreamCa: string | null = null;
  if (engineUrl.startsWith('https:') && t.tls.ca !== null) {
    try {
      upstreamCa = readFileSync(t.tls.ca, 'utf8');
    } catch (cause) {
      throw new UsageError(`cannot read target.tls.ca file ${t.tls.ca}`, { cause });
    }
  }
  // The hop (and the certificate library it makes its CA with) is loaded only for a run through it.
  const { startHop } = await import('../hop/index.js');
  const hop = await startHop({
    upstream: engineUrl,
    faults: via.faults,
    upstreamCa,
    upstreamInsecure: t.tls.insecure,
    upstreamServername: t.tls.servername,
    // The client's keep-alive decides reuse, not the hop's: a shorter hint from the hop would cap it.
    keepAliveTimeoutMs: Math.max(60_000, workload.agents.keep_alive_timeout_ms + 5_000),
    // Never cut a request the client still waits for: the client's watchdog is the judge.
    upstreamTimeoutMs: workload.watchdog.total_ms + 5_000,
    // Its one client is the run's, which opens the connections its agents need (up to 100,000 of them): a cap
    // would fail requests the run measures. A standalone hop or the recorder keeps the default cap.
    maxConnections: null,
    ...(hooks.onFault === undefined ? {} : { onFault: hooks.onFault }),
  });
  return {
    ...common,
    path: 'hop',
    requestUrl: hop.url,
    // The hop's own CA, made at start: verification stays on.
    tls: { caFile: hop.caFile, insecure: false, servername: null },
    connectProxy: null,
    bypassUrl: t.bypass ?? engineUrl,
    hop,
    description: `through the built-in hop ${hop.url} to ${engineUrl}${via.faults.length > 0 ? ` (faults: ${via.faults.map((f) => f.kind).join(', ')})` : ''}`,
    close: () => hop.close(),
  };
}
