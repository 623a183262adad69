// `roundload record`: the recording proxy in front of the real router, until SIGINT or SIGTERM; then a tally.
// The harness points at the URL it prints; every chat request it sends is forwarded unchanged and recorded.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { startRecorder } from '../trace/index.js';
import { UsageError } from '../errors.js';
import * as flag from './flags.js';
import { parseListen, parseUpstream } from './hop.js';
import { shellCommand, shellQuote } from '../util/index.js';

export interface RecordCommandOptions {
  upstream: string;
  /** `host:port`. @default "127.0.0.1:8443" */
  listen: string;
  /** `--listen-expose`: allow `listen` on a host other than loopback. */
  listenExpose?: boolean;
  out: string;
  tls?: boolean;
  certDir?: string;
  content?: boolean;
  sessionHeader?: string;
  /** PEM file of a CA to trust for an https upstream. */
  upstreamCa?: string;
  upstreamInsecure?: boolean;
  /** Print a line per recorded request (stderr). */
  verbose?: boolean;
}

/** Runs until a signal; resolves once the trace is closed. `stop` (tests) ends it like a signal. */
export async function recordCommand(opts: RecordCommandOptions, stop?: AbortSignal): Promise<void> {
  const { host, port } = parseListen(opts.listen);
  const upstream = parseUpstream(opts.upstream);
  // As --dashboard-expose: the recorder has no authentication, so anyone who reaches it sends requests to the
  // upstream in the harness's place, and they land in the trace.
  flag.listenHost(opts.listen, host, opts.listenExpose, 'the recorder has no authentication, so whoever reaches it sends requests to the upstream and into the trace');
  if (existsSync(opts.out) && statSync(opts.out).size > 0) throw new UsageError(`--out ${opts.out} already holds a trace; record to a new file (a trace is one recording)`);
  if (opts.sessionHeader !== undefined && !/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(opts.sessionHeader)) throw new UsageError(`--session-header must be an HTTP header name, got "${opts.sessionHeader}"`);
  let upstreamCa: string | null = null;
  if (opts.upstreamCa !== undefined) {
    try {
      upstreamCa = readFileSync(opts.upstreamCa, 'utf8');
    } catch (cause) {
      throw new UsageError(`cannot read --upstream-ca ${opts.upstreamCa}`, { cause });
    }
  }
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const recorder = await startRecorder({
    upstream: upstream.href,
    host,
    port,
    out: opts.out,
    tls: opts.tls === true || opts.certDir !== undefined,
    ...(opts.certDir === undefined ? {} : { certDir: opts.certDir }),
    content: opts.content === true,
    sessionHeader: opts.sessionHeader ?? null,
    upstreamCa,
    upstreamInsecure: opts.upstreamInsecure === true,
    log,
    ...(opts.verbose === true
      ? {
          onRequest: (r) =>
            log(
              `${r.conversation} round ${r.round}: ${r.request.messages.length} messages, connection ${r.connection?.id ?? '?'} #${r.connection?.nth ?? '?'}, ${r.response.status ?? 'no response'} in ${Math.round(r.response.e2e_ms ?? 0)} ms${r.response.error === null ? '' : ` (${r.response.error.kind})`}`,
            ),
        }
      : {}),
  });
  // The signals are ours before anything says the recorder is there: a harness that stops it the moment it
  // reads the URL must not kill it mid-start.
  const stopped = new Promise<void>((resolve) => {
    const done = (): void => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      stop?.removeEventListener('abort', done);
      resolve();
    };
    const onSignal = (signal: NodeJS.Signals): void => {
      log(`${signal}: closing the recorder (requests still in flight are cut and recorded as closed)`);
      done();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    if (stop?.aborted === true) done();
    else stop?.addEventListener('abort', done, { once: true });
  });
  log(`roundload record listening on ${recorder.url} → ${upstream.href}`);
  log(
    `point the harness at ${recorder.url} (its base URL, e.g. ${recorder.url}/v1); recording to ${opts.out}${opts.content === true ? ' WITH message contents (--content)' : ' (shapes only, no message text)'}`,
  );
  if (recorder.caFile !== null) log(`CA certificate (the harness must trust it, e.g. NODE_EXTRA_CA_CERTS, SSL_CERT_FILE, curl --cacert): ${recorder.caFile}`);
  // The URL on stdout, alone on its line, for scripts: URL=$(roundload record … | head -1).
  process.stdout.write(`${recorder.url}\n`);
  await stopped;
  await recorder.close();
  const t = recorder.tally();
  const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
  log(
    `${t.not_recorded === 0 ? 'recorded' : 'forwarded'} ${plural(t.requests, 'request')} in ${plural(t.conversations, 'conversation')} on ${plural(t.connections, 'connection')} (${t.errors} with errors${t.passed_through > 0 ? `; ${t.passed_through} other requests forwarded, not recorded` : ''}) ${t.not_recorded === 0 ? 'to' : 'while recording to'} ${opts.out}`,
  );
  if (t.stopped !== null)
    log(
      `INCOMPLETE trace: ${t.not_recorded} of the ${plural(t.requests, 'chat request')} ${t.not_recorded === 1 ? 'is' : 'are'} NOT in it (${t.requests - t.not_recorded} recorded); recording stopped at ${(t.stopped.at_ms / 1000).toFixed(1)} s: ${t.stopped.reason}`,
    );
  if (t.dropped_connections > 0)
    log(`${plural(t.dropped_connections, 'harness connection')} closed at once: the recorder held as many as it takes (4,096, with an upstream one each); the harness saw them reset`);
  log(`look at it: ${shellCommand('roundload', 'trace', 'show', opts.out)}; replay it: roundload run WORKLOAD --replay ${shellQuote(opts.out)}`);
}
