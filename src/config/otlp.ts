// Where and how the run's spans are exported (`tracing.otlp`), resolved as every OpenTelemetry SDK resolves
// it: the workload's field, else the standard environment variable, else the SDK's default. Pure (the
// environment is passed in); a value roundload cannot honour (gRPC) is a usage error naming the variable.
import { UsageError } from '../errors.js';
import type { Workload } from './schema.js';

export type OtlpProtocol = 'http/protobuf' | 'http/json';

/** The export as the run performs it. `headers` may hold secrets: never written, never logged. */
export interface OtlpExport {
  /** The traces URL the spans are POSTed to. */
  url: string;
  protocol: OtlpProtocol;
  headers: Record<string, string>;
  serviceName: string;
  resourceAttributes: Record<string, string>;
  /** The embedded engine exports its spans too. */
  engine: boolean;
  maxQueueSpans: number;
  maxBatchSpans: number;
  intervalMs: number;
  timeoutMs: number;
  flushTimeoutMs: number;
}

type Env = Readonly<Record<string, string | undefined>>;

const PROTOCOLS: readonly string[] = ['http/protobuf', 'http/json'];

/** The run's export, or null when no endpoint is given anywhere. @throws UsageError for a variable roundload
 * cannot honour (a protocol other than http/protobuf or http/json, an endpoint that is not an http(s) URL). */
export function resolveOtlp(tracing: Workload['tracing'], env: Env): OtlpExport | null {
  const o = tracing.otlp;
  const url = o.traces_endpoint ?? envUrl(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') ?? withTracesPath(o.endpoint ?? envUrl(env, 'OTEL_EXPORTER_OTLP_ENDPOINT'));
  if (url === null) return null;
  const resourceAttributes = { ...keyValueList(env['OTEL_RESOURCE_ATTRIBUTES'] ?? ''), ...o.resource_attributes };
  const headersVar = o.headers_env ?? (present(env, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS') ? 'OTEL_EXPORTER_OTLP_TRACES_HEADERS' : 'OTEL_EXPORTER_OTLP_HEADERS');
  return {
    url,
    protocol: o.protocol ?? envProtocol(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? envProtocol(env, 'OTEL_EXPORTER_OTLP_PROTOCOL') ?? 'http/protobuf',
    headers: keyValueList(env[headersVar] ?? ''),
    // OTEL_SERVICE_NAME wins over a service.name among the resource attributes (the SDKs' rule).
    serviceName: o.service_name ?? (present(env, 'OTEL_SERVICE_NAME') ? env['OTEL_SERVICE_NAME']!.trim() : (resourceAttributes['service.name'] ?? 'roundload')),
    resourceAttributes,
    engine: o.engine,
    maxQueueSpans: o.max_queue_spans,
    maxBatchSpans: o.max_batch_spans,
    intervalMs: o.interval_s * 1000,
    timeoutMs: o.timeout_s * 1000,
    flushTimeoutMs: o.flush_timeout_s * 1000,
  };
}

function present(env: Env, name: string): boolean {
  return (env[name] ?? '').trim() !== '';
}

function envUrl(env: Env, name: string): string | null {
  if (!present(env, name)) return null;
  const text = env[name]!.trim();
  let url: URL | null = null;
  try {
    url = new URL(text);
  } catch {
    // the message below
  }
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new UsageError(`${name} must be an http:// or https:// URL of an OTLP/HTTP receiver (e.g. http://collector:4318), got ${JSON.stringify(text.slice(0, 200))}`);
  }
  return url.href;
}

/** `OTEL_EXPORTER_OTLP_ENDPOINT`'s rule: the base URL with `v1/traces` appended (after a `/`). */
function withTracesPath(base: string | null): string | null {
  if (base === null) return null;
  return `${base.endsWith('/') ? base : `${base}/`}v1/traces`;
}

function envProtocol(env: Env, name: string): OtlpProtocol | null {
  if (!present(env, name)) return null;
  const value = env[name]!.trim();
  if (PROTOCOLS.includes(value)) return value as OtlpProtocol;
  throw new UsageError(
    `${name}=${JSON.stringify(value.slice(0, 50))}: roundload exports over OTLP/HTTP only, http/protobuf or http/json; point it at the collector's HTTP port (4318) and unset ${name} or set it to http/protobuf`,
  );
}

/** `key1=value1,key2=value2`, each part percent-decoded (the W3C Baggage form OTEL_* lists use); a part
 * without `=` or with an empty key is skipped, as the SDKs do. */
function keyValueList(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of text.split(',')) {
    const at = part.indexOf('=');
    if (at <= 0) continue;
    const key = decode(part.slice(0, at).trim());
    if (key === '' || key === '__proto__') continue;
    out[key] = decode(part.slice(at + 1).trim());
  }
  return out;
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
