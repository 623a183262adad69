// A finished (or, for a stopped engine, cut-off) span as OTLP carries it, in roundload's own plain shape:
// the encoders (otlp-proto.ts, otlp-json.ts) write it out. Times are Unix milliseconds (fractions kept).

/** An attribute's value: text, a number (an integer is `int_value`, any other `double_value`) or a flag. */
export type AttrValue = string | number | boolean;

export type Attributes = Readonly<Record<string, AttrValue>>;

/** OTLP's SpanKind. */
export const SPAN_KIND = { internal: 1, server: 2, client: 3 } as const;
export type SpanKind = (typeof SPAN_KIND)[keyof typeof SPAN_KIND];

/** OTLP's Status.StatusCode. */
export const STATUS_CODE = { unset: 0, ok: 1, error: 2 } as const;

export interface SpanEvent {
  name: string;
  timeMs: number;
  attributes?: Attributes;
}

export interface SpanLink {
  traceId: string;
  spanId: string;
  attributes?: Attributes;
}

export interface OtelSpan {
  /** 32 hex. */
  traceId: string;
  /** 16 hex. */
  spanId: string;
  /** 16 hex, or null for a root span. */
  parentSpanId: string | null;
  name: string;
  kind: SpanKind;
  startMs: number;
  endMs: number;
  attributes: Attributes;
  events: readonly SpanEvent[];
  links: readonly SpanLink[];
  status: { code: (typeof STATUS_CODE)[keyof typeof STATUS_CODE]; message: string };
}

/** Who made the spans of one export request: its resource (`service.name` among them) and scope. */
export interface SpanSource {
  resource: Attributes;
  scope: { name: string; version: string };
}

/** Unix milliseconds (with a fraction) as OTLP's nanoseconds, exact to the nanosecond the fraction holds. */
export function unixNanos(ms: number): bigint {
  const whole = Math.floor(ms);
  return BigInt(whole) * 1_000_000n + BigInt(Math.round((ms - whole) * 1_000_000));
}
