// `roundload hop`: the built-in TLS hop standalone, in front of an upstream, until SIGINT or SIGTERM.
// It prints where it listens and the CA file a client must trust; faults come from repeated --fault specs.
import { startHop, parseFaultSpec, formatFault } from '../hop/index.js';
import { UsageError } from '../errors.js';
import * as flag from './flags.js';
import { logLine } from './output.js';

export interface HopCommandOptions {
  /** `host:port`, e.g. `127.0.0.1:8443` (`[::1]:8443` for IPv6). */
  listen: string;
  upstream: string;
  fault: string[];
  certDir?: string;
  /** `--listen-expose`: allow `listen` on a host other than loopback. */
  listenExpose?: boolean;
  /** Print every fault as it acts (stderr). */
  verbose?: boolean;
}

/** Splits `host:port` (or `[v6]:port`); the port must be 0-65535. */
export function parseListen(listen: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(listen.trim());
  const port = m === null ? NaN : Number(m[3]);
  if (m === null || !(port >= 0 && port <= 65_535)) throw new UsageError(`--listen must be host:port (e.g. 127.0.0.1:8443), got "${listen}"`);
  return { host: m[1] ?? m[2] ?? '127.0.0.1', port };
}

/** `--upstream`: an http:// or https:// URL. @throws UsageError otherwise. */
export function parseUpstream(value: string): URL {
  return flag.httpUrl('--upstream', value);
}

export async function hopCommand(opts: HopCommandOptions): Promise<void> {
  const { host, port } = parseListen(opts.listen);
  // The hop has no authentication: whoever reaches it sends requests to the upstream in a client's place.
  flag.listenHost(opts.listen, host, opts.listenExpose, 'the hop has no authentication, so whoever reaches it sends requests to the upstream');
  const upstream = parseUpstream(opts.upstream);
  const faults = opts.fault.map(parseFaultSpec);
  const log = logLine;
  const hop = await startHop({
    upstream: upstream.href,
    host,
    port,
    faults,
    ...(opts.certDir === undefined ? {} : { certDir: opts.certDir }),
    ...(opts.verbose === true ? { onFault: (f) => log(`fault ${f.fault}: connection ${f.connection}${f.request > 0 ? ` request ${f.request}` : ''}: ${f.detail}`) } : {}),
  });
  // The signals are ours before anything says the hop is there: a script that stops it the moment it reads
  // the address must not kill it mid-start.
  const stopped = new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      log(`${signal}: closing the hop`);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  log(`roundload hop listening on ${hop.url} → ${hop.upstream}`);
  log(`CA certificate (trust it: target.tls.ca, curl --cacert): ${hop.caFile}`);
  log(`faults: ${faults.length === 0 ? 'none' : faults.map(formatFault).join('  ')}`);
  // The CA path on stdout too, alone on its line, for scripts: CA=$(roundload hop … | head -1).
  process.stdout.write(`${hop.caFile}\n`);
  await stopped;
  const s = hop.stats();
  log(
    `served ${s.requests} requests on ${s.connections} connections; faults acted: ${
      Object.entries(s.faults)
        .filter(([, n]) => n > 0)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ') || 'none'
    }`,
  );
  await hop.close();
}
