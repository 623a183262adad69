// `--dashboard [host:]port`: where the live dashboard listens. Loopback unless a host is given, and a
// host that is not loopback only with `--dashboard-expose` (the page has no authentication and shows the
// target and the workload).
import { UsageError } from '../errors.js';
import { isLoopbackHost } from '../util/index.js';

export interface DashboardAddress {
  host: string;
  port: number;
}

/**
 * `8080`, `0` (any free port), `127.0.0.1:8080`, `localhost:8080`, `[::1]:8080`, or another host with
 * `expose`. @throws UsageError on anything else.
 */
export function parseDashboardAddress(value: string, expose = false): DashboardAddress {
  const v = value.trim();
  const m = /^(?:\[([^\]]+)\]:|([^:[\]]+):)?(\d{1,5})$/.exec(v);
  const port = m === null ? NaN : Number(m[3]);
  if (m === null || port > 65_535) {
    throw new UsageError(`--dashboard takes [host:]port (8080, 127.0.0.1:8080, [::1]:8080; 0 picks a free port), got "${value}"`);
  }
  const host = m[1] ?? m[2] ?? '127.0.0.1';
  if (!isLoopbackHost(host) && !expose) {
    throw new UsageError(
      `--dashboard ${v} would listen on ${host}, beyond this machine: the page has no authentication and shows the target and the workload. Pass --dashboard-expose as well to allow it, or leave the host out to listen on 127.0.0.1`,
    );
  }
  return { host, port };
}
