// idle_close: a connection idle for `after_s` is reset (`mode: rst`) or goes silent: kept open, nothing it
// sends read or answered any more (a half-open connection from the client's view).
import type { HopFault } from '../config/index.js';
import { FORWARD, TAKEN, type HopFaultModule } from './fault.js';

export function idleCloseFault(f: Extract<HopFault, { kind: 'idle_close' }>): HopFaultModule {
  return {
    kind: 'idle_close',
    onRequest: ({ conn, req, tap }) => {
      if (!conn.silent) return FORWARD;
      tap.end({ kind: 'fault', fault: 'idle_close' });
      req.resume();
      return TAKEN;
    },
    onIdle: (conn, tools) => {
      if (tools.closed() || conn.silent) return;
      conn.idleTimer = setTimeout(() => {
        conn.idleTimer = null;
        if (conn.active > 0 || tools.closed()) return;
        if (f.mode === 'rst') {
          tools.fire('idle_close', conn, 0, `reset after ${f.after_s} s idle`);
          tools.reset(conn);
          return;
        }
        tools.fire('idle_close', conn, 0, `went silent after ${f.after_s} s idle (socket kept open, nothing read or answered)`);
        conn.silent = true;
        // Keep the TCP connection: no FIN, no RST, and Node's own keep-alive timer must not close it either.
        conn.socket.setTimeout(0);
        conn.socket.pause();
      }, f.after_s * 1000);
    },
  };
}
