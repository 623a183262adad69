// The gauges section of the terminal summary: per target how scraping went, then one line per pinned,
// stale or rotating series, and the idle and too-short ones grouped, so the call a person needs is on top.
import type { GaugeVerdict, ScrapeTargetSummary } from '../types/index.js';

const INDENT = '           ';

/** A series as people read it: the name and the labels that tell series apart (model_name is the same
 * everywhere). `shown`: the label keys to show (default all but model_name). */
export function seriesName(v: Pick<GaugeVerdict, 'name' | 'labels'>, shown: ReadonlySet<string> | null = null): string {
  const labels = Object.entries(v.labels).filter(([k]) => k !== 'model_name' && (shown === null || shown.has(k)));
  return labels.length === 0 ? v.name : `${v.name}{${labels.map(([k, val]) => `${k}="${val}"`).join(',')}}`;
}

/** Per target and gauge name, the label keys whose values differ between its series: the only ones that
 * tell them apart on the terminal (constant ones — engine_type, tp_rank… — stay in summary.json and the report). */
function tellingLabels(gauges: readonly GaugeVerdict[]): Map<string, Set<string>> {
  const values = new Map<string, Map<string, Set<string>>>();
  for (const g of gauges) {
    const key = `${g.target}\u0000${g.name}`;
    const byLabel = values.get(key) ?? new Map<string, Set<string>>();
    values.set(key, byLabel);
    for (const [k, v] of Object.entries(g.labels)) byLabel.set(k, (byLabel.get(k) ?? new Set()).add(v));
  }
  const out = new Map<string, Set<string>>();
  for (const [key, byLabel] of values) out.set(key, new Set([...byLabel].filter(([, vs]) => vs.size > 1).map(([k]) => k)));
  return out;
}

function flowNote(v: GaugeVerdict): string {
  const f = v.flow;
  if (f === undefined) return '';
  const parts: string[] = [];
  if (f.counter !== null) parts.push(f.counter_moved_intervals > 0 ? `${f.counter} moved` : `${f.counter} flat`);
  parts.push(f.completions > 0 ? `${f.completions} request${f.completions === 1 ? '' : 's'} completed while watched` : 'no request completed while watched');
  return `; ${parts.join(', ')}`;
}

function line(v: GaugeVerdict, name: string): string {
  const head = `${v.target} ${name}`;
  switch (v.verdict) {
    case 'pinned':
      return `${head} PINNED: ${v.evidence[0] ?? ''}`;
    case 'pinned_under_load':
      return `${head} PINNED UNDER LOAD: ${v.evidence[0] ?? ''}; ${v.evidence[1] ?? ''}`;
    case 'stale':
      return `${head} stale: ${v.evidence[0] ?? ''}`;
    case 'rotating': {
      // The longest stretch at one non-zero value: under 0.05 s it changed at every scrape.
      const held = v.longest_nonzero_s < 0.05 ? 'changed at every scrape' : `held one non-zero value ${v.longest_nonzero_s.toFixed(1)} s at most`;
      const dips = v.floor === undefined ? `${v.dips} dip${v.dips === 1 ? '' : 's'}` : `${v.floor.returns} return${v.floor.returns === 1 ? '' : 's'} to the floor of ${v.floor.level}`;
      const steady = v.dips === 0 ? `steady ${v.longest_nonzero_s.toFixed(1)} s with work flowing` : `${held}, ${dips}`;
      const floor = v.evidence.find((e) => e.startsWith('never back to 0') || e.startsWith('floor stepped'));
      const tail = v.evidence.find((e) => e.startsWith('ended at'));
      return `${head} rotating: ${steady}${flowNote(v)}${floor === undefined ? '' : ` (${floor.split(':')[0]})`}${tail === undefined ? '' : ` (${tail.split(' while')[0]} at the end: stale)`}`;
    }
    default:
      return `${head} ${v.verdict}`;
  }
}

function targetLine(t: ScrapeTargetSummary): string {
  const every = t.interval_ms_p50 === null ? '' : `, every ${t.interval_ms_p50} ms`;
  const burst = t.burst > 0 ? `, ${t.burst} in bursts` : '';
  const failed = t.failed > 0 ? `, ${t.failed} failed (last: ${t.last_error ?? 'unknown'})` : '';
  return `${t.target}: ${t.scrapes} scrapes${every}${burst}${failed}; ${t.series} series`;
}

/** Lines for the terminal summary (none when the monitor did not run). */
export function gaugeLines(gauges: readonly GaugeVerdict[], targets: readonly ScrapeTargetSummary[] = []): string[] {
  if (gauges.length === 0 && targets.length === 0) return [];
  const out: string[] = [];
  const head = targets.length === 0 ? 'gauges' : targets.map(targetLine).join('  ·  ');
  out.push(`gauges     ${head}`);
  const telling = tellingLabels(gauges);
  const nameOf = (g: GaugeVerdict): string => seriesName(g, telling.get(`${g.target}\u0000${g.name}`) ?? null);
  const order: GaugeVerdict['verdict'][] = ['pinned', 'pinned_under_load', 'stale', 'rotating'];
  for (const kind of order) for (const v of gauges.filter((g) => g.verdict === kind)) out.push(`${INDENT}${line(v, nameOf(v))}`);
  const insufficient = gauges.filter((g) => g.verdict === 'insufficient');
  if (insufficient.length > 0) {
    const needed = Math.max(...insufficient.map((g) => g.needed_s ?? 0));
    const window = Math.max(...insufficient.map((g) => g.window_s));
    out.push(`${INDENT}too short to tell (${window.toFixed(1)} s watched, about ${needed} s needed, no dip seen): ${insufficient.map((g) => `${g.target} ${nameOf(g)}`).join(', ')}`);
  }
  const ratios = gauges.filter((g) => g.verdict === 'ratio');
  if (ratios.length > 0) out.push(`${INDENT}ratios and rates (never judged pinned): ${ratios.map((g) => `${g.target} ${nameOf(g)} ${Number(g.last_value.toPrecision(3))}`).join(', ')}`);
  const idle = gauges.filter((g) => g.verdict === 'idle');
  if (idle.length > 0) out.push(`${INDENT}idle (0 throughout): ${idle.map((g) => `${g.target} ${nameOf(g)}`).join(', ')}`);
  return out;
}
