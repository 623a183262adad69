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

/** A server for `handle`, plain or TLS, whose accepted sockets `connections` keeps. */
export function createHopServer(certs: HopCertificates | null, keepAliveTimeoutMs: number, handle: RequestListener, connections: HopConnections): http.Server {
  const server = certs === null ? http.createServer(handle) : https.createServer({ key: certs.key, cert: certs.cert, ALPNProtocols: ['http/1.1'] }, handle);
  server.keepAliveTimeout = keepAliveTimeoutMs;
  // Must exceed keepAliveTimeout, or Node may cut an idle kept-alive socket as a slow request.
  server.headersTimeout = keepAliveTimeoutMs + 1_000;
  server.requestTimeout = 0;
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
