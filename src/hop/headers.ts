// Which headers cross the hop: hop-by-hop headers (RFC 9110 §7.6.1, and those a Connection header names) stay
// on their side; the upstream request gets the upstream's Host and the X-Forwarded-* pair.
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { TLSSocket } from 'node:tls';

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'transfer-encoding', 'te', 'trailer', 'upgrade']);

/** The end-to-end headers of a message, the ones a proxy forwards. */
export function endToEnd(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  const named = new Set(
    String(headers.connection ?? '')
      .toLowerCase()
      .split(',')
      .map((s) => s.trim()),
  );
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || named.has(name)) continue;
    out[name] = value;
  }
  return out;
}

/** The headers of the upstream request made for `req`, sent to `upstreamHost` (host[:port]). */
export function upstreamRequestHeaders(req: IncomingMessage, upstreamHost: string): OutgoingHttpHeaders {
  const headers = endToEnd(req.headers);
  headers.host = upstreamHost;
  headers['x-forwarded-for'] = req.socket.remoteAddress ?? '';
  // What the client spoke to the hop: https only on a TLS socket (the recorder listens on plain HTTP by default).
  headers['x-forwarded-proto'] = (req.socket as Partial<TLSSocket>).encrypted === true ? 'https' : 'http';
  return headers;
}

export function isEventStream(headers: IncomingHttpHeaders): boolean {
  return String(headers['content-type'] ?? '').includes('text/event-stream');
}
