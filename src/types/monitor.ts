// Shapes shared by the monitor (which produces them), the summary, the diagnosis and the report.

/** One selected sample of a scrape: a gauge or counter series and its value. */
export interface GaugeSample {
  /** Metric name as exposed (e.g. `sglang:num_running_reqs`). */
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** One scrape of one monitored target. Written to gauges.jsonl. */
export interface ScrapeEvent {
  kind: 'scrape';
  t: string;
  run_ms: number;
  /** Target name from `monitor.targets` (e.g. `prefill`, `decode`, `router`, `engine`). */
  target: string;
  url: string;
  duration_ms: number;
  ok: boolean;
  /** Why it failed (timeout, refused, HTTP status, parse error), when it did. */
  error: string | null;
  /** True while burst sampling (after a hang) is on. */
  burst: boolean;
  samples: GaugeSample[];
}

export type GaugeVerdictKind = 'idle' | 'rotating' | 'pinned' | 'stale' | 'insufficient';

/** The call on one gauge series over the run (see README, "Reading the gauge verdicts"). */
export interface GaugeVerdict {
  target: string;
  name: string;
  labels: Record<string, string>;
  verdict: GaugeVerdictKind;
  samples: number;
  window_s: number;
  /** Longest stretch the gauge stayed non-zero and unchanged. */
  longest_nonzero_s: number;
  /** Times the gauge dropped (to a lower value or zero) after being non-zero. */
  dips: number;
  last_value: number;
  /** For `insufficient`: how long a window would have told. */
  needed_s: number | null;
  /** Plain sentences: which counters moved, whether client requests completed meanwhile. */
  evidence: string[];
}

export type DiagnosisVerdict = 'none' | 'proxy' | 'engine' | 'client' | 'unknown';

/** Where the run's hangs most likely come from, with the evidence for the call. */
export interface Diagnosis {
  verdict: DiagnosisVerdict;
  evidence: string[];
}
