// The `/metrics` endpoint during a run (`--metrics-port`): loopback by default, and then it answers loopback
// Host names only (or the address it was bound to), as the dashboard does: a page of another site whose name
// now resolves to 127.0.0.1 (DNS rebinding) cannot read it. Bound to a wildcard address (`0.0.0.0` in a pod)
// it is open to whoever reaches it, and any Host is answered. A scrape is bounded; so is the close.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { ServerStartError } from '../errors.js';
import { hostHeaderName, isLoopbackHost } from '../util/index.js';

/** A scrape that takes longer is answered 503 rather than left hanging. */
const SCRAPE_TIMEOUT_MS = 2000;
const CLOSE_TIMEOUT_MS = 1000;

export interface MetricsServer {
  /** `http://127.0.0.1:PORT/metrics`. */
  readonly url: string;
  /** Closes the server and its connections (a Prometheus scrape connection is kept alive), bounded. */
  close(): Promise<void>;
}

/** Whether a request's Host header may be answered by a server bound to `boundHost`. */
export function hostAllowed(hostHeader: string | undefined, boundHost: string): boolean {
  if (hostHeader === undefined) return true;
  const bound = boundHost.toLowerCase().replace(/^\[|\]$/g, '');
  if (bound === '0.0.0.0' || bound === '::' || bound === '') return true;
  const name = hostHeaderName(hostHeader);
  return isLoopbackHost(name) || name === bound;
}

/** Listens on `host:port` (0: any free port). @throws ServerStartError when it cannot. */
export async function serveMetrics(o: { host: string; port: number; registry: Registry }): Promise<MetricsServer> {
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    if (!hostAllowed(req.headers.host, o.host)) {
      res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' }).end('roundload metrics answer to loopback names only (127.0.0.1, localhost, [::1]) or the address they are bound to\n');
      return;
    }
    const path = (req.url ?? '/').split('?')[0];
    if ((req.method !== 'GET' && req.method !== 'HEAD') || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('roundload metrics: GET /metrics\n');
      return;
    }
    const timer = setTimeout(() => {
      if (!res.headersSent) res.writeHead(503).end('metrics timed out\n');
    }, SCRAPE_TIMEOUT_MS);
    o.registry.metrics().then(
      (text) => {
        clearTimeout(timer);
        if (!res.headersSent) res.writeHead(200, { 'content-type': o.registry.contentType }).end(req.method === 'HEAD' ? undefined : text);
      },
      (error: unknown) => {
        clearTimeout(timer);
        if (!res.headersSent) res.writeHead(500).end(`${String(error)}\n`);
      },
    );
  };
  const server = createServer(handle);
  server.keepAliveTimeout = 5000;
  const asked = `${o.host.includes(':') ? `[${o.host}]` : o.host}:${o.port}`;
  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error): void => reject(new ServerStartError('the client metrics endpoint', asked, { cause: error }));
    server.once('error', onError);
    server.listen(o.port, o.host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | null = null;
  return {
    url: `http://${host}:${address.port}/metrics`,
    close() {
      closing ??= new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, CLOSE_TIMEOUT_MS);
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
