// The verdicts roundload gives, each declared once with its meaning and its tone: the diagnosis's (where the
// failures come from) and the gauges' (what a series did over the run). The terminal, report.html and the
// diagnosis's candidate list read them from here; a verdict left out of a table does not compile.
// No runtime dependencies.

/** How a verdict is shown: good (green), warn (amber), bad (red), muted (grey). */
export type Tone = 'good' | 'warn' | 'bad' | 'muted';

interface DiagnosisVerdictInfo {
  /** One sentence a user reads next to the verdict. */
  meaning: string;
  tone: Tone;
  /** Scored by the diagnosis (evidence can be for or against it); `none` and `unknown` are outcomes, not candidates. */
  candidate: boolean;
}

/** Where the failures come from, in the order the diagnosis scores them. `engine_overloaded`: the engine makes
 * progress, slowly; `host_starved`: the client's timers ran late while it used little CPU; `network`:
 * connections could not be established. */
export const DIAGNOSIS_VERDICTS = {
  none: { meaning: 'nothing hung or failed', tone: 'good', candidate: false },
  proxy: { meaning: 'the failures come from the proxy or hop in front of the engine', tone: 'bad', candidate: true },
  engine: { meaning: 'the failures come from the engine (or what is behind it): it stopped answering or making progress', tone: 'bad', candidate: true },
  engine_overloaded: { meaning: 'the engine is overloaded: work flows, slowly (queues and TTFT high)', tone: 'bad', candidate: true },
  client: { meaning: 'the client itself stalled: its event loop was too busy to read its sockets', tone: 'bad', candidate: true },
  host_starved: { meaning: 'the client was starved of CPU by its host: its timers ran late while it used little CPU', tone: 'warn', candidate: true },
  network: { meaning: 'connections could not be established (the network, or an accept queue)', tone: 'bad', candidate: true },
  unknown: { meaning: 'the evidence does not place the failures', tone: 'warn', candidate: false },
} as const satisfies Record<string, DiagnosisVerdictInfo>;

export type DiagnosisVerdict = keyof typeof DIAGNOSIS_VERDICTS;

/** The verdicts the diagnosis scores. */
export type DiagnosisCandidate = { [K in DiagnosisVerdict]: (typeof DIAGNOSIS_VERDICTS)[K]['candidate'] extends true ? K : never }[DiagnosisVerdict];

/** The candidates in scoring order. */
export const DIAGNOSIS_CANDIDATES = (Object.keys(DIAGNOSIS_VERDICTS) as DiagnosisVerdict[]).filter((v): v is DiagnosisCandidate => DIAGNOSIS_VERDICTS[v].candidate);

/** What a gauge series did over the run (see docs/monitor.md). `ratio`: a ratio or rate gauge that was not
 * always 0 — it holds still under steady load as well as when stuck, so it is never judged a pin. */
export const GAUGE_VERDICTS = {
  idle: { tone: 'muted' },
  rotating: { tone: 'good' },
  pinned: { tone: 'bad' },
  pinned_under_load: { tone: 'bad' },
  stale: { tone: 'warn' },
  insufficient: { tone: 'warn' },
  ratio: { tone: 'muted' },
} as const satisfies Record<string, { tone: Tone }>;

export type GaugeVerdictKind = keyof typeof GAUGE_VERDICTS;
