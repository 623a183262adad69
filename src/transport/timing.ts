// How long each socket took to open — TCP connect and TLS handshake, measured around undici's own connector —
// and how many sockets were opening at that moment (a client's start-up rush). The tracker reads it when a
// socket carries its first request, so every record says what opening its socket cost.
import { performance } from 'node:perf_hooks';
import type { buildConnector as BuildConnector } from 'undici';
import { buildConnector } from './undici.js';
import { round1 } from '../util/index.js';

export interface SocketTiming {
  /** Connect start to TCP connected (to the end of the handshake for plain http, where the two coincide). */
  connectMs: number;
  /** TCP connected to TLS handshake done; null for plain http. */
  tlsMs: number | null;
  /** Sockets being opened at once when this one began, itself included. */
  opening: number;
}

const timings = new WeakMap<object, SocketTiming>();
let opening = 0;

/** undici's connector for `options`, timing every socket it opens. */
export function timedConnector(options: BuildConnector.BuildOptions): BuildConnector.connector {
  const connect = buildConnector(options);
  return (opts, callback) => {
    const startedMs = performance.now();
    opening += 1;
    const concurrent = opening;
    let tcpAtMs: number | null = null;
    let done = false;
    const socket = connect(opts, (...args) => {
      if (!done) {
        done = true;
        opening -= 1;
      }
      const [error, s] = args;
      if (error === null && s !== null) {
        const now = performance.now();
        // Plain http: undici hands the socket over on 'connect' itself, before our listener below runs.
        timings.set(
          s,
          tcpAtMs === null ? { connectMs: round1(now - startedMs), tlsMs: null, opening: concurrent } : { connectMs: round1(tcpAtMs - startedMs), tlsMs: round1(now - tcpAtMs), opening: concurrent },
        );
      }
      callback(...args);
    });
    const events = socket as { once?: (event: string, listener: () => void) => unknown } | undefined;
    events?.once?.('connect', () => {
      tcpAtMs = performance.now();
    });
    // Destroyed before it connected (the client closed): no callback comes, but it is no longer opening.
    events?.once?.('close', () => {
      if (!done) {
        done = true;
        opening -= 1;
      }
    });
    return socket;
  };
}

/** What opening `socket` cost, when one of our connectors opened it. */
export function socketTiming(socket: object): SocketTiming | undefined {
  return timings.get(socket);
}
