// Prometheus remote-write 1.0's WriteRequest in protobuf wire format, written by hand: three messages
// (WriteRequest → TimeSeries → Label, Sample) need a varint, a length prefix and a little-endian double,
// not a protobuf library. Field numbers are those of prometheus/prompb/{remote,types}.proto.
import { BYTES, FIXED64, ProtoWriter, VARINT } from '../util/index.js';

/** One series as remote write sends it: its labels (`__name__` among them) and its samples in time order. */
export interface TimeSeries {
  labels: Readonly<Record<string, string>>;
  samples: { value: number; timestampMs: number }[];
}

const utf8 = new TextEncoder();

/** `Label { string name = 1; string value = 2; }` */
function label(name: string, value: string): Uint8Array {
  const w = new ProtoWriter();
  w.tag(1, BYTES);
  w.bytes(utf8.encode(name));
  w.tag(2, BYTES);
  w.bytes(utf8.encode(value));
  return w.finish();
}

/** `Sample { double value = 1; int64 timestamp = 2; }` (timestamps are ms since the epoch, never negative here). */
function sample(value: number, timestampMs: number): Uint8Array {
  const w = new ProtoWriter();
  w.tag(1, FIXED64);
  w.double(value);
  w.tag(2, VARINT);
  w.varint(Math.max(0, Math.round(timestampMs)));
  return w.finish();
}

/** `TimeSeries { repeated Label labels = 1; repeated Sample samples = 2; }`, labels sorted by name as the
 * protocol requires. */
function timeSeries(series: TimeSeries): Uint8Array {
  const w = new ProtoWriter();
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
  const w = new ProtoWriter();
  for (const s of series) {
    w.tag(1, BYTES);
    w.bytes(timeSeries(s));
  }
  return w.finish();
}
