// Hop faults: the command-line form (`kind:key=value,…`) parsed into the workload's form and validated by the
// same schema, and the seeded choices the faults make (which connections to reset, how much jitter).
import { hopFaultSchema, type HopFault } from '../config/index.js';
import { UsageError } from '../errors.js';

export type HopFaultKind = HopFault['kind'];

/** The kinds the workload's schema knows, as the schema declares them. */
const FAULT_KINDS: readonly HopFaultKind[] = hopFaultSchema.options.map((o) => o.shape.kind.value);

function scalar(text: string): string | number | boolean {
  if (text === 'true') return true;
  if (text === 'false') return false;
  const n = Number(text);
  return text.trim() !== '' && Number.isFinite(n) ? n : text;
}

/**
 * Parses one `--fault` value: `stall:after_requests=3`, `cut:after_chunks=5`, `buffer`,
 * `idle_close:after_s=2,mode=rst`, `reset:ratio=0.2,seed=4`, `latency:ms=200,jitter_ms=50`.
 * `-` and `_` are interchangeable in names.
 * @throws UsageError naming the spec and what is wrong with it.
 */
export function parseFaultSpec(spec: string): HopFault {
  const colon = spec.indexOf(':');
  const kind = (colon < 0 ? spec : spec.slice(0, colon)).trim().replace(/-/g, '_');
  const raw: Record<string, unknown> = { kind };
  const rest = colon < 0 ? '' : spec.slice(colon + 1).trim();
  if (rest !== '') {
    for (const part of rest.split(',')) {
      const eq = part.indexOf('=');
      if (eq <= 0) throw new UsageError(`--fault ${spec}: "${part}" is not key=value (e.g. stall:after_requests=3)`);
      raw[part.slice(0, eq).trim().replace(/-/g, '_')] = scalar(part.slice(eq + 1).trim());
    }
  }
  const result = hopFaultSchema.safeParse(raw);
  if (!result.success) {
    const problems = result.error.issues.map((i) => {
      const where = i.path.length > 0 ? i.path.join('.') : 'kind';
      if (i.code === 'invalid_union') return `${where}: must be one of ${FAULT_KINDS.join(', ')}`;
      if (i.code === 'unrecognized_keys') return `unknown key${i.keys.length > 1 ? 's' : ''} ${i.keys.join(', ')}`;
      return `${where}: ${i.message}`;
    });
    throw new UsageError(`--fault ${spec}: ${problems.join('; ')}`);
  }
  return result.data;
}

/** The command-line form of a fault (for logs and `roundload hop`'s banner). */
export function formatFault(fault: HopFault): string {
  const params = Object.entries(fault)
    .filter(([key]) => key !== 'kind')
    .map(([key, value]) => `${key}=${String(value)}`);
  return params.length === 0 ? fault.kind : `${fault.kind}:${params.join(',')}`;
}

/** A uniform number in [0, 1) from a seed and an index: the same pair, the same number, run after run. */
export function seededUnit(seed: number, index: number): number {
  // splitmix32 over the pair: cheap, well mixed, no state to share between connections.
  let x = (Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index + 1, 0xc2b2ae35)) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x21f0aaad);
  x = Math.imul(x ^ (x >>> 15), 0x735a2d97);
  x ^= x >>> 15;
  return (x >>> 0) / 4_294_967_296;
}
