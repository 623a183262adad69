// The hop's listening side: its certificates (none without TLS; made in a given folder, or in a temporary one
// removed on release), an HTTP or HTTPS server with the hop's keep-alive settings whose sockets go to the
// hop's connections, and listening on a host and port.
import http, { type RequestListener } from 'node:http';
import https from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Socket } from 'node:net';
import { ServerStartError } from '../errors.js';
import { makeCertificates, type HopCertificates } from './cert.js';
import type { HopConnections } from './connections.js';

/** The certificates a hop serves with, and the removal of the folder it made for them. */
export interface HopTls {
  certs: HopCertificates | null;
  /** Removes the temporary certificate folder (nothing when none was made). */
  release: () => void;
}

/** No certificates without TLS; else those made in `certDir`, or in a temporary folder that `release` removes. */
export async function hopTls(useTls: boolean, certDir: string | undefined): Promise<HopTls> {
  if (!useTls) return { certs: null, release: () => {} };
  const dir = certDir ?? mkdtempSync(join(tmpdir(), 'roundload-hop-'));
  const certs = await makeCertificates(dir);
  return { certs, release: certDir === undefined ? () => rmSync(dir, { recursive: true, force: true }) : () => {} };
}

/** What a hop's listening side allows its clients. */
export interface HopServerLimits {
  /** Idle keep-alive time of a client connection. */
  keepAliveTimeoutMs: number;
  /** Longest a request's head (request line and headers) may take from its first byte: a client that sends
   * it a byte at a time holds a socket no longer (408, closed). */
  headersTimeoutMs: number;
  /** Most client connections open at once; past it a new one is closed at once (`onDrop`). null: no cap. */
  maxConnections: number | null;
  /** Told of each connection closed at the cap. */
  onDrop?: (() => void) | undefined;
}

/** How often Node looks for requests past headersTimeoutMs (its default, 30 s, would let one last a minute). */
const CHECK_INTERVAL_MS = 1_000;

/** A server for `handle`, plain or TLS, whose accepted sockets `connections` keeps. */
export function createHopServer(certs: HopCertificates | null, limits: HopServerLimits, handle: RequestListener, connections: HopConnections): http.Server {
  const options = { connectionsCheckingInterval: Math.min(CHECK_INTERVAL_MS, limits.headersTimeoutMs) };
  const server = certs === null ? http.createServer(options, handle) : https.createServer({ ...options, key: certs.key, cert: certs.cert, ALPNProtocols: ['http/1.1'] }, handle);
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  // Node 20 times only a request in progress against it: an idle kept-alive socket waits for keepAliveTimeout
  // alone (test/hop/limits.test.ts), so it need not exceed keepAliveTimeout (it was that plus 1 s: 601 s for
  // the recorder).
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = 0;
  if (limits.maxConnections !== null) server.maxConnections = limits.maxConnections;
  if (limits.onDrop !== undefined) server.on('drop', limits.onDrop);
  // Without TLS the TCP socket is the one requests arrive on.
  server.on('connection', (raw: Socket) => connections.accepted(raw, certs === null));
  server.on('secureConnection', (tls: Socket) => {
    connections.adopt(tls);
  });
  // A client that fails the handshake (it does not trust the CA, say) is its own business: never a crash.
  server.on('tlsClientError', () => {});
  return server;
}

/** `host` as a URL writes it (an IPv6 address in brackets). */
export function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/** Listens on `host`:`port` (0: a free one). @returns the port. @throws ServerStartError if it cannot listen. */
export async function listen(server: http.Server, host: string, port: number): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(new ServerStartError('the hop', `${urlHost(host)}:${port}`, { cause: error })));
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  return typeof address === 'object' && address !== null ? address.port : port;
}
