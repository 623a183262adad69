// Whether an address is on this machine: 127.0.0.0/8, ::1, `localhost`. The diagnosis uses it to rule out a
// network between the client and a target on loopback.
import { isIP } from 'node:net';

/** 127.0.0.0/8, ::1, `localhost` (a bracketed IPv6 host too). */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h);
  return mapped !== null && mapped[1]!.startsWith('127.');
}

/** The host name of a `Host` header (`127.0.0.1:8080`, `[::1]:8080`, `localhost`), lower case, no port. */
export function hostHeaderName(header: string): string {
  const h = header.trim().toLowerCase();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(h);
  if (bracketed !== null) return bracketed[1]!;
  return h.replace(/:\d+$/, '');
}

/** Whether a URL's host is on loopback; null when there is no URL or it does not parse. */
export function isLoopbackUrl(url: string | null): boolean | null {
  if (url === null) return null;
  try {
    return isLoopbackHost(new URL(url).hostname);
  } catch {
    return null;
  }
}
