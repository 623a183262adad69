// Prometheus text exposition (format 0.0.4), written by hand: gauges, counters and cumulative histograms,
// every series carrying the same labels, in the shape SGLang's Python client emits.

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

export type MetricFamily =
  | { readonly name: string; readonly help: string; readonly type: 'gauge' | 'counter'; readonly value: number }
  | { readonly name: string; readonly help: string; readonly type: 'histogram'; readonly histogram: Histogram };

/** Floats as Python's client prints them (`1.0`, not `1`), so scrapers see what SGLang would send. */
function num(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : '-Inf';
  return Number.isInteger(n) ? `${n}.0` : String(n);
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function labelText(labels: Readonly<Record<string, string>>, extra?: string): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  if (extra !== undefined) parts.push(extra);
  return parts.length === 0 ? '' : `{${parts.join(',')}}`;
}

export function renderExposition(families: readonly MetricFamily[], labels: Readonly<Record<string, string>>): string {
  const lines: string[] = [];
  for (const f of families) {
    lines.push(`# HELP ${f.name} ${f.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`, `# TYPE ${f.name} ${f.type}`);
    if (f.type !== 'histogram') {
      lines.push(`${f.name}${labelText(labels)} ${num(f.value)}`);
      continue;
    }
    const h = f.histogram;
    const cumulative = h.cumulative();
    h.bounds.forEach((bound, i) => lines.push(`${f.name}_bucket${labelText(labels, `le="${num(bound)}"`)} ${num(cumulative[i] ?? 0)}`));
    lines.push(`${f.name}_bucket${labelText(labels, 'le="+Inf"')} ${num(h.count)}`);
    lines.push(`${f.name}_sum${labelText(labels)} ${num(h.sum)}`, `${f.name}_count${labelText(labels)} ${num(h.count)}`);
  }
  return `${lines.join('\n')}\n`;
}
