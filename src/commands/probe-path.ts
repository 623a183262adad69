// `roundload probe-path URL`: measures a network path before a run — idle keep-alive timeout, read timeout of
// a held response, stream buffering, largest body — each bounded, progress on stderr, a table (or --json) on
// stdout. `--via hop` measures through the built-in TLS hop, `--via URL` through an HTTP CONNECT proxy.
import { readFileSync } from 'node:fs';
import { startHop, type HopHandle } from '../hop/index.js';
import { CHECKS, formatProbe, openPathClient, probePath, type Check, type ProbeReport } from '../probe-path/index.js';
import type { TlsOptions } from '../transport/index.js';
import { UsageError } from '../errors.js';
import * as flag from './flags.js';
import { logLine } from './output.js';

export interface ProbePathCommandOptions {
  via?: string;
  ca?: string;
  insecure?: boolean;
  model?: string;
  /** @default "75s" */
  maxIdle?: string;
  /** @default "60s" */
  maxHold?: string;
  /** Comma-separated checks to leave out (repeatable). */
  skip?: string[];
  json?: boolean;
}

function skipped(values: readonly string[]): Set<Check> {
  const names = values
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
  for (const name of names) if (!(CHECKS as readonly string[]).includes(name)) throw new UsageError(`--skip: unknown check "${name}"; one of ${CHECKS.join(', ')}`);
  return new Set(names as Check[]);
}

function targetUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`the URL to probe must be an http:// or https:// URL, got "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`the URL to probe must be an http:// or https:// URL, got "${value}"`);
  return url;
}

function readCa(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (cause) {
    throw new UsageError(`cannot read --ca file ${file}`, { cause });
  }
}

/** Where requests go and how: straight, through a CONNECT proxy, or through a built-in hop started here. */
async function route(target: URL, opts: ProbePathCommandOptions): Promise<{ url: string; path: string; tls: TlsOptions; connectProxy: string | null; hop: HopHandle | null }> {
  const tls: TlsOptions = { caFile: opts.ca ?? null, insecure: opts.insecure === true, servername: null };
  if (opts.via === undefined) return { url: target.href, path: 'direct', tls, connectProxy: null, hop: null };
  if (opts.via === 'hop') {
    // The --ca file, if any, is the upstream's CA: the client trusts the hop's own.
    const upstreamCa = target.protocol === 'https:' && tls.caFile !== null ? readCa(tls.caFile) : null;
    const hop = await startHop({ upstream: target.href, faults: [], upstreamCa, upstreamInsecure: tls.insecure, upstreamServername: null });
    return { url: `${hop.url}${target.pathname.replace(/\/+$/, '')}`, path: 'hop', tls: { caFile: hop.caFile, insecure: false, servername: null }, connectProxy: null, hop };
  }
  const proxy = targetUrl(opts.via);
  return { url: target.href, path: 'proxy', tls, connectProxy: proxy.href, hop: null };
}

/** Runs the probe; returns the exit code (0: measured). @throws UsageError, TargetUnreachableError */
export async function probePathCommand(url: string, opts: ProbePathCommandOptions): Promise<number> {
  const target = targetUrl(url);
  const maxIdleMs = flag.duration('--max-idle', opts.maxIdle ?? '75s', 2000);
  const maxHoldMs = flag.duration('--max-hold', opts.maxHold ?? '60s', 1000);
  const skip = skipped(opts.skip ?? []);
  const path = await route(target, opts);
  const client = openPathClient({ url: path.url, tls: path.tls, connectProxy: path.connectProxy, headers: {}, keepAliveTimeoutMs: 2 * maxIdleMs + 30_000 });
  let report: ProbeReport;
  try {
    report = await probePath(client, { url: path.url, path: path.path, model: opts.model ?? null, maxIdleMs, maxHoldMs, skip }, logLine);
  } finally {
    await client.close();
    await path.hop?.close();
  }
  process.stdout.write(opts.json === true ? `${JSON.stringify(report, null, 2)}\n` : formatProbe(report));
  return 0;
}
