// Prometheus remote-write 1.0's WriteRequest in protobuf wire format, written by hand: three messages
// (WriteRequest → TimeSeries → Label, Sample) need a varint, a length prefix and a little-endian double,
// not a protobuf library. Field numbers are those of prometheus/prompb/{remote,types}.proto.

/** One series as remote write sends it: its labels (`__name__` among them) and its samples in time order. */
export interface TimeSeries {
  labels: Readonly<Record<string, string>>;
  samples: { value: number; timestampMs: number }[];
}

/** Wire types of the fields used here. */
const VARINT = 0;
const FIXED64 = 1;
const BYTES = 2;

/** Bytes of a message being written: appended to, then copied out once. */
class Writer {
  #buf = new Uint8Array(1024);
  #view = new DataView(this.#buf.buffer);
  #len = 0;

  #room(n: number): void {
    if (this.#len + n <= this.#buf.length) return;
    const next = new Uint8Array(Math.max(this.#buf.length * 2, this.#len + n));
    next.set(this.#buf.subarray(0, this.#len));
    this.#buf = next;
    this.#view = new DataView(next.buffer);
  }

  /** An unsigned varint up to 2^53 (a millisecond timestamp fits): arithmetic, not 32-bit shifts. */
  varint(n: number): void {
    this.#room(10);
    let v = n;
    while (v >= 0x80) {
      this.#buf[this.#len++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.#buf[this.#len++] = v;
  }

  tag(field: number, wireType: number): void {
    this.varint(field * 8 + wireType);
  }

  double(n: number): void {
    this.#room(8);
    this.#view.setFloat64(this.#len, n, true);
    this.#len += 8;
  }

  bytes(b: Uint8Array): void {
    this.varint(b.length);
    this.#room(b.length);
    this.#buf.set(b, this.#len);
    this.#len += b.length;
  }

  finish(): Uint8Array {
    return this.#buf.slice(0, this.#len);
  }
}

const utf8 = new TextEncoder();

/** `Label { string name = 1; string value = 2; }` */
function label(name: string, value: string): Uint8Array {
  const w = new Writer();
  w.tag(1, BYTES);
  w.bytes(utf8.encode(name));
  w.tag(2, BYTES);
  w.bytes(utf8.encode(value));
  return w.finish();
}

/** `Sample { double value = 1; int64 timestamp = 2; }` (timestamps are ms since the epoch, never negative here). */
function sample(value: number, timestampMs: number): Uint8Array {
  const w = new Writer();
  w.tag(1, FIXED64);
  w.double(value);
  w.tag(2, VARINT);
  w.varint(Math.max(0, Math.round(timestampMs)));
  return w.finish();
}

/** `TimeSeries { repeated Label labels = 1; repeated Sample samples = 2; }`, labels sorted by name as the
 * protocol requires. */
function timeSeries(series: TimeSeries): Uint8Array {
  const w = new Writer();
  for (const name of Object.keys(series.labels).sort()) {
    w.tag(1, BYTES);
    w.bytes(label(name, series.labels[name]!));
  }
  for (const s of series.samples) {
    w.tag(2, BYTES);
    w.bytes(sample(s.value, s.timestampMs));
  }
  return w.finish();
}

/** `WriteRequest { repeated TimeSeries timeseries = 1; }`, uncompressed. */
export function encodeWriteRequest(series: readonly TimeSeries[]): Uint8Array {
  const w = new Writer();
  for (const s of series) {
    w.tag(1, BYTES);
    w.bytes(timeSeries(s));
  }
  return w.finish();
}
