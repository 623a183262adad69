// A test OTLP/HTTP receiver on 127.0.0.1: takes POST /v1/traces in http/protobuf (decoded with the official
// opentelemetry-proto definitions, as generated into @opentelemetry/otlp-transformer) or http/json, and keeps
// each span in one plain shape (ids as hex, times as decimal strings) for the tests to read. It can also
// refuse, or take a request and never answer (a slow collector).
import { createRequire } from 'node:module';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';

/** A span as received, whatever the protocol. */
export interface ReceivedSpan {
  service: string;
  resource: Record<string, unknown>;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Record<string, unknown>;
  events: { name: string; timeUnixNano: string }[];
  links: { traceId: string; spanId: string }[];
  status: { code: number; message: string };
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** Each request's content type and headers. */
  requests: { contentType: string; headers: IncomingMessage['headers'] }[];
  close(): Promise<void>;
}

interface ProtoRoot {
  opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: ProtoType } } } } };
}
interface ProtoType {
  decode(bytes: Uint8Array): unknown;
  toObject(message: unknown, options: Record<string, unknown>): unknown;
}

const require = createRequire(import.meta.url);
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root.js') as ProtoRoot;
const ExportTraceServiceRequest = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

type Json = Record<string, unknown>;

/** The protobuf body decoded by the official definitions, as protobufjs's JSON-like object (bytes as hex). */
export function decodeProtobuf(body: Uint8Array): Json {
  const message = ExportTraceServiceRequest.decode(body);
  const object = ExportTraceServiceRequest.toObject(message, { longs: String, enums: Number, bytes: Array, defaults: false, arrays: true }) as Json;
  return hexBytes(object) as Json;
}

/** Byte arrays (ids) as hex, as OTLP/JSON writes them. */
function hexBytes(v: unknown): unknown {
  if (Array.isArray(v)) return v.every((x) => typeof x === 'number') && v.length > 0 ? Buffer.from(v).toString('hex') : v.map(hexBytes);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, hexBytes(x)]));
  return v;
}

function anyValue(v: Json | undefined): unknown {
  if (v === undefined) return undefined;
  if ('stringValue' in v) return v.stringValue;
  if ('boolValue' in v) return v.boolValue;
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return v.doubleValue;
  return v;
}

function attrs(list: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of (list ?? []) as Json[]) out[kv.key as string] = anyValue(kv.value as Json | undefined);
  return out;
}

/** Every span of an ExportTraceServiceRequest in its JSON form (OTLP/JSON, or the decoded protobuf). */
export function spansOf(request: Json): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of (request.resourceSpans ?? []) as Json[]) {
    const resource = attrs((rs.resource as Json | undefined)?.attributes);
    for (const ss of (rs.scopeSpans ?? []) as Json[]) {
      for (const s of (ss.spans ?? []) as Json[]) {
        const status = (s.status ?? {}) as Json;
        out.push({
          service: String(resource['service.name']),
          resource,
          traceId: String(s.traceId),
          spanId: String(s.spanId),
          parentSpanId: typeof s.parentSpanId === 'string' ? s.parentSpanId : '',
          name: String(s.name),
          kind: Number(s.kind ?? 0),
          startTimeUnixNano: String(s.startTimeUnixNano),
          endTimeUnixNano: String(s.endTimeUnixNano),
          attributes: attrs(s.attributes),
          events: ((s.events ?? []) as Json[]).map((e) => ({ name: String(e.name), timeUnixNano: String(e.timeUnixNano) })),
          links: ((s.links ?? []) as Json[]).map((l) => ({ traceId: String(l.traceId), spanId: String(l.spanId) })),
          status: { code: Number(status.code ?? 0), message: typeof status.message === 'string' ? status.message : '' },
        });
      }
    }
  }
  return out;
}

/** `answer`: `ok` (200), `refuse` (a status), or `never` (take the body, never answer). */
export async function otlpReceiver(t: TestContext, options: { answer?: 'ok' | 'never' | number } = {}): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const requests: OtlpReceiver['requests'] = [];
  const held: ServerResponse[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const contentType = req.headers['content-type'] ?? '';
      requests.push({ contentType, headers: req.headers });
      const answer = options.answer ?? 'ok';
      if (answer === 'never') {
        held.push(res);
        return;
      }
      if (typeof answer === 'number') {
        res.writeHead(answer).end('refused');
        return;
      }
      try {
        const decoded = contentType.startsWith('application/x-protobuf') ? decodeProtobuf(body) : (JSON.parse(body.toString('utf8')) as Json);
        spans.push(...spansOf(decoded));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } catch (error) {
        res.writeHead(400).end(String(error));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = async (): Promise<void> => {
    for (const res of held) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  t.after(close);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, requests, close };
}
