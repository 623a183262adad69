// Protocol buffers' wire format, written by hand for the few messages roundload sends (remote write's
// WriteRequest, OTLP's ExportTraceServiceRequest): a varint, a length prefix, fixed 32/64-bit values and a
// little-endian double need no protobuf library. A message is written into its own writer and added to its
// parent as bytes.

/** Wire types. */
export const VARINT = 0;
export const FIXED64 = 1;
export const BYTES = 2;

const utf8 = new TextEncoder();

/** Bytes of a message being written: appended to, then copied out once. */
export class ProtoWriter {
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

  /** A fixed64 (OTLP's nanosecond timestamps), little-endian. */
  fixed64(n: bigint): void {
    this.#room(8);
    this.#view.setBigUint64(this.#len, n, true);
    this.#len += 8;
  }

  bytes(b: Uint8Array): void {
    this.varint(b.length);
    this.#room(b.length);
    this.#buf.set(b, this.#len);
    this.#len += b.length;
  }

  /** A length-delimited field: `field` tag, then the bytes. */
  field(field: number, b: Uint8Array): void {
    this.tag(field, BYTES);
    this.bytes(b);
  }

  /** A string field (UTF-8). */
  string(field: number, s: string): void {
    this.field(field, utf8.encode(s));
  }

  finish(): Uint8Array {
    return this.#buf.slice(0, this.#len);
  }
}
