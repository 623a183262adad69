// The knee of a ramp or sweep (summary.json `capacity`) as people read it: the terminal's `capacity` lines and
// report.html's chart of offered load against TTFT/ITL p50/p99 (ms) and throughput (tokens/s), the knee marked.
import type { Capacity, CapacityStage, LatencyEstimate, Summary } from '../analysis/index.js';
import type { ChartSpec } from './charts.js';

const KNEE_COLOR = '#047857';
const PAST_COLOR = '#b91c1c';

/** `8 conv/s` or `64 agents`. */
export function levelText(c: Pick<Capacity, 'unit'>, p: { rate_per_s?: number; agents?: number }): string {
  return c.unit === 'rate_per_s' ? `${p.rate_per_s ?? 0} conv/s` : `${p.agents ?? 0} agents`;
}

function ms(v: number): string {
  return v >= 1000 ? `${(v / 1000).toFixed(2)} s` : v >= 100 ? `${Math.round(v)} ms` : `${v.toFixed(1)} ms`;
}

function latencyText(name: string, e: LatencyEstimate | null): string {
  return e === null ? `${name} none` : `${name} p50 ${ms(e.p50_ms)} p99 ${ms(e.p99_ms)} (n ${e.count})`;
}

function throughputText(s: CapacityStage): string {
  const t = s.throughput;
  const v = Math.round(t.output_tokens_per_s).toLocaleString('en-US');
  return t.se === null ? `${v} tok/s` : `${v} ± ${Math.round(1.96 * t.se).toLocaleString('en-US')} tok/s`;
}

/** What a stage's gauges read, target by target; "not reported" when no scrape fell in it. */
export function gaugesText(gauges: CapacityStage['gauges']): string {
  if (gauges === null || gauges.length === 0) return 'engine gauges not reported';
  return gauges
    .map((g) => {
      const parts = [
        g.queue_max === null ? null : `waiting mean ${g.queue_mean} max ${g.queue_max}`,
        g.running_max === null ? null : `running mean ${g.running_mean} max ${g.running_max}`,
        g.kv_usage_max === null ? null : `KV usage max ${(g.kv_usage_max * 100).toFixed(1)}%`,
      ].filter((p) => p !== null);
      return `${g.target}: ${parts.length === 0 ? 'no queue, running or KV gauge' : parts.join(', ')}`;
    })
    .join(' · ');
}

/** The terminal's capacity lines: the knee and the first stage past it, each stage's figures, why, the gauges. */
export function capacityLines(s: Summary): string[] {
  const c = s.capacity;
  if (c === undefined) return [];
  const knee = c.knee === null ? `no stage held (the first, ${c.stages[0]!.phase}, did not)` : `knee ${c.knee.phase} (${levelText(c, c.knee)}): the highest stage whose service held`;
  const past = c.past === null ? ' · every stage held: the knee is at or above the last one' : ` · past it ${c.past.phase} (${levelText(c, c.past)}): ${c.past.reasons.map((r) => r.kind).join(', ')}`;
  const out = [`capacity   ${knee}${past}`];
  const width = Math.max(...c.stages.map((st) => st.phase.length));
  for (const st of c.stages) {
    const mark = st.holds ? 'holds' : 'PAST ';
    out.push(`           · ${st.phase.padEnd(width)}  ${mark}  ${latencyText('TTFT', st.ttft)} · ${latencyText('ITL', st.itl)} · ${throughputText(st)}`);
  }
  if (c.past !== null) {
    for (const r of c.past.reasons) out.push(`           ${c.past.phase} ${r.kind}: ${r.text}`);
    out.push(`           ${c.past.phase} gauges: ${gaugesText(c.past.gauges)}`);
  }
  out.push(`           (a stage holds when: ${c.basis}. ±: the 95% interval of the stage's mean over its windows)`);
  return out;
}

/** One chart: offered load on x; TTFT and ITL p50/p99 on the left (ms, log scale), output tokens/s on the right;
 * the knee and the first stage past it marked. */
export function capacityChart(s: Summary): ChartSpec | null {
  const c = s.capacity;
  if (c === undefined) return null;
  const x = c.stages.map((st) => (c.unit === 'rate_per_s' ? st.rate_per_s! : st.agents!));
  const pick = (metric: 'ttft' | 'itl', key: 'p50_ms' | 'p99_ms') => c.stages.map((st) => st[metric]?.[key] ?? null);
  const markers = [
    ...(c.knee === null ? [] : [{ x: c.unit === 'rate_per_s' ? c.knee.rate_per_s! : c.knee.agents!, label: 'knee', color: KNEE_COLOR }]),
    ...(c.past === null ? [] : [{ x: c.unit === 'rate_per_s' ? c.past.rate_per_s! : c.past.agents!, label: `past: ${c.past.reasons.map((r) => r.kind).join(', ')}`, color: PAST_COLOR }]),
  ];
  const verdict = c.knee === null ? 'no stage held' : `knee at ${levelText(c, c.knee)} (${c.knee.phase})`;
  return {
    id: 'capacity',
    title: `Capacity: ${verdict}${c.past === null ? '' : `; past it at ${levelText(c, c.past)}: ${c.past.reasons.map((r) => r.kind).join(', ')}`}`,
    x_kind: 'level',
    x_label: c.unit === 'rate_per_s' ? 'offered conversations/s' : 'agents',
    y_label: 'ms (log)',
    y2_label: 'output tokens/s',
    y_log: true,
    wide: true,
    x,
    series: [
      { label: 'TTFT p50', values: pick('ttft', 'p50_ms'), dots: true, color: '#2563eb' },
      { label: 'TTFT p99', values: pick('ttft', 'p99_ms'), dots: true, color: '#93c5fd' },
      { label: 'ITL p50', values: pick('itl', 'p50_ms'), dots: true, color: '#059669' },
      { label: 'ITL p99', values: pick('itl', 'p99_ms'), dots: true, color: '#6ee7b7' },
      { label: 'output tokens/s', values: c.stages.map((st) => st.throughput.output_tokens_per_s), scale: 'y2', dots: true, color: '#d97706' },
    ],
    markers,
    marker_noun: 'stage marker',
    note: `one point per stage; the green dashed line marks the knee, the red one the first stage past it. Holds: ${c.basis}`,
  };
}
