// Prometheus text exposition (format 0.0.4), written by hand in the two dialects the deployment serves:
// SGLang's Python client (labels sorted alphabetically, `le` among them; floats as `1.0`) and the Rust router's
// exporter (labels in the order written, `le` last; integers as `1`).

/** A histogram with fixed upper bounds; counts are per bucket and made cumulative when rendered. */
export class Histogram {
  private readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(readonly bounds: readonly number[]) {
    this.counts = new Array<number>(bounds.length).fill(0);
  }

  observe(value: number): void {
    this.sum += value;
    this.count += 1;
    const at = this.bounds.findIndex((b) => value <= b);
    if (at >= 0) this.counts[at] = (this.counts[at] ?? 0) + 1;
  }

  /** Cumulative counts per bound (the `+Inf` bucket is `count`). */
  cumulative(): number[] {
    let running = 0;
    return this.counts.map((c) => (running += c));
  }
}

export type Labels = Readonly<Record<string, string>>;

export type MetricFamily =
  | { readonly name: string; readonly help: string; readonly type: 'gauge' | 'counter'; readonly samples: readonly { readonly labels: Labels; readonly value: number }[] }
  | { readonly name: string; readonly help: string; readonly type: 'histogram'; readonly samples: readonly { readonly labels: Labels; readonly histogram: Histogram }[] };

export type ExpositionDialect = 'python' | 'rust';

/** Python's client prints floats as Go would (`1.0`, `0.25`, `8.128902e+06` from 7 integer digits on);
 * Rust prints what it holds (`1`, `0.25`). */
function num(n: number, dialect: ExpositionDialect): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : '-Inf';
  if (dialect === 'rust') return String(n);
  const repr = Number.isInteger(n) && Math.abs(n) < 1e16 ? `${n}.0` : String(n);
  const dot = repr.indexOf('.');
  if (n <= 0 || dot <= 6) return repr;
  const mantissa = `${repr[0]}.${repr.slice(1, dot)}${repr.slice(dot + 1)}`.replace(/[0.]+$/, '');
  return `${mantissa}e+0${dot - 1}`;
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function labelText(labels: Labels, dialect: ExpositionDialect, le?: string): string {
  const entries = Object.entries(labels);
  if (le !== undefined) entries.push(['le', le]);
  if (dialect === 'python') entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const parts = entries.map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  return parts.length === 0 ? '' : `{${parts.join(',')}}`;
}

export function renderExposition(families: readonly MetricFamily[], dialect: ExpositionDialect = 'python'): string {
  const lines: string[] = [];
  for (const f of families) {
    lines.push(`# HELP ${f.name} ${f.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`, `# TYPE ${f.name} ${f.type}`);
    if (f.type !== 'histogram') {
      for (const s of f.samples) lines.push(`${f.name}${labelText(s.labels, dialect)} ${num(s.value, dialect)}`);
      continue;
    }
    for (const { labels, histogram: h } of f.samples) {
      const cumulative = h.cumulative();
      h.bounds.forEach((bound, i) => lines.push(`${f.name}_bucket${labelText(labels, dialect, num(bound, 'python'))} ${num(cumulative[i] ?? 0, dialect)}`));
      lines.push(`${f.name}_bucket${labelText(labels, dialect, '+Inf')} ${num(h.count, dialect)}`);
      lines.push(`${f.name}_sum${labelText(labels, dialect)} ${num(h.sum, dialect)}`, `${f.name}_count${labelText(labels, dialect)} ${num(h.count, dialect)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
