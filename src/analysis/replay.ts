// A replay against its recording, round by round: prompt tokens, TTFT, e2e, errors and hangs, recorded vs
// replayed, plus how answers were used and whether sockets were reused as recorded. Pure: records in, figures out.
import type { RequestRecord } from '../types/index.js';
import { round1, round3 } from '../util/index.js';

/** What the comparison needs of one recorded request. */
export interface RecordedRequest {
  seq: number;
  conversation: string;
  round: number;
  connection: { id: number; nth: number } | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  ttft_ms: number | null;
  e2e_ms: number | null;
  error: boolean;
}

export interface ReplaySide {
  requests: number;
  /** Mean over the requests that reported it; null when none did. */
  prompt_tokens_mean: number | null;
  completion_tokens_mean: number | null;
  ttft_p50_ms: number | null;
  e2e_p50_ms: number | null;
  errors: number;
  /** Replayed side only: the recorder does not judge hangs (null on the recorded side). */
  hangs: number | null;
}

export interface ReplayRoundComparison {
  round: number;
  recorded: ReplaySide;
  replayed: ReplaySide;
  /** (replayed − recorded) / recorded prompt tokens, in percent; null when either is not reported. */
  prompt_tokens_diff_pct: number | null;
  /** The same for completion tokens. */
  completion_tokens_diff_pct: number | null;
}

type SizedBy = NonNullable<NonNullable<RequestRecord['replay']>['sizing']>['by'];

/** How close the replay came to the recorded token counts, and how its text was sized. */
export interface ReplayMatch {
  /** Mean over rounds of |prompt_tokens_diff_pct|; null when no round has one. */
  prompt_mean_abs_pct: number | null;
  /** The round furthest off in prompt tokens. */
  prompt_worst: { round: number; diff_pct: number } | null;
  completion_mean_abs_pct: number | null;
  completion_worst: { round: number; diff_pct: number } | null;
  /** Requests by how their synthetic text was sized (docs/replay.md, "True to the server's tokenizer"). */
  sized: Record<SizedBy, number>;
  /** Recorded / replayed prompt tokens of the replay's first request that reported usage (null: none did),
   * and how that request was sized: by `characters`, it says how differently the server counts synthetic text. */
  first_ratio: number | null;
  first_sized: SizedBy | null;
  /** Mean scale of the synthetic text over the requests sized by `usage`, `tokenize` or `probe` (null: none). */
  scale_mean: number | null;
}

export interface ReplaySummary {
  file: string;
  connection: string;
  speed: number;
  conversations: { recorded: number; replayed: number };
  requests: { recorded: number; replayed: number };
  /** How answer slots were filled: the live answer, or the recorded shape (the live one had another number
   * of tool calls). */
  answers: { live: number; substituted: number };
  /** First pass only: requests whose socket was the nth on its connection as recorded, with recorded and
   * replayed connections paired one to one. */
  sockets: { compared: number; same: number; recorded_connections: number; replayed_connections: number };
  rounds: ReplayRoundComparison[];
  match: ReplayMatch;
}

interface Acc {
  requests: number;
  prompt: number[];
  completion: number[];
  ttft: number[];
  e2e: number[];
  errors: number;
  hangs: number;
}

const acc = (): Acc => ({ requests: 0, prompt: [], completion: [], ttft: [], e2e: [], errors: 0, hangs: 0 });

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return round1(s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2);
}

function mean(values: number[]): number | null {
  return values.length === 0 ? null : round1(values.reduce((a, b) => a + b, 0) / values.length);
}

function side(a: Acc, hangs: boolean): ReplaySide {
  return {
    requests: a.requests,
    prompt_tokens_mean: mean(a.prompt),
    completion_tokens_mean: mean(a.completion),
    ttft_p50_ms: median(a.ttft),
    e2e_p50_ms: median(a.e2e),
    errors: a.errors,
    hangs: hangs ? a.hangs : null,
  };
}

function diffPct(recorded: number | null, replayed: number | null): number | null {
  return recorded === null || replayed === null || recorded === 0 ? null : round1(((replayed - recorded) / recorded) * 100);
}

/** The mean absolute and the worst per-round difference, of prompt or completion tokens. */
function offBy(rounds: readonly ReplayRoundComparison[], which: 'prompt' | 'completion'): { meanAbs: number | null; worst: { round: number; diff_pct: number } | null } {
  const diffs = rounds.flatMap((r) => {
    const pct = which === 'prompt' ? r.prompt_tokens_diff_pct : r.completion_tokens_diff_pct;
    return pct === null ? [] : [{ round: r.round, diff_pct: pct }];
  });
  const worst = diffs.reduce<{ round: number; diff_pct: number } | null>((w, d) => (w === null || Math.abs(d.diff_pct) > Math.abs(w.diff_pct) ? d : w), null);
  const meanAbs = diffs.length === 0 ? null : round1(diffs.reduce((a, d) => a + Math.abs(d.diff_pct), 0) / diffs.length);
  return { meanAbs, worst };
}

export class ReplayComparison {
  readonly #settings: { file: string; connection: string; speed: number };
  readonly #bySeq = new Map<number, RecordedRequest>();
  readonly #recorded = new Map<number, Acc>();
  readonly #replayed = new Map<number, Acc>();
  readonly #recordedConversations: number;
  readonly #conversations = new Set<string>();
  readonly #answers = { live: 0, substituted: 0 };
  readonly #sockets = { compared: 0, same: 0 };
  readonly #pairs = new Map<number, string>();
  readonly #pairedBack = new Map<string, number>();
  readonly #replayedConnections = new Set<string>();
  #requests = 0;
  readonly #sized: Record<SizedBy, number> = { characters: 0, usage: 0, tokenize: 0, probe: 0, verbatim: 0 };
  /** The earliest replayed request with usage: when it started, recorded / replayed prompt tokens. */
  #firstRatio: { runMs: number; ratio: number | null; by: SizedBy | null } | null = null;
  readonly #scales: number[] = [];

  #first(record: RequestRecord, promptTokens: number): void {
    if (this.#firstRatio !== null && this.#firstRatio.runMs <= record.run_ms) return;
    const recorded = record.replay === undefined ? null : (this.#bySeq.get(record.replay.seq)?.prompt_tokens ?? null);
    this.#firstRatio = { runMs: record.run_ms, ratio: recorded === null || promptTokens === 0 ? null : round3(recorded / promptTokens), by: record.replay?.sizing?.by ?? null };
  }

  constructor(recorded: readonly RecordedRequest[], settings: { file: string; connection: string; speed: number }) {
    this.#settings = settings;
    const conversations = new Set<string>();
    for (const r of recorded) {
      this.#bySeq.set(r.seq, r);
      conversations.add(r.conversation);
      const a = this.#recorded.get(r.round) ?? acc();
      this.#recorded.set(r.round, a);
      a.requests += 1;
      if (r.prompt_tokens !== null) a.prompt.push(r.prompt_tokens);
      if (r.completion_tokens !== null && !r.error) a.completion.push(r.completion_tokens);
      if (r.ttft_ms !== null && !r.error) a.ttft.push(r.ttft_ms);
      if (!r.error && r.e2e_ms !== null) a.e2e.push(r.e2e_ms);
      if (r.error) a.errors += 1;
    }
    this.#recordedConversations = conversations.size;
  }

  add(record: RequestRecord): void {
    if (record.replay === undefined) return;
    this.#requests += 1;
    this.#conversations.add(record.conversation);
    const a = this.#replayed.get(record.round) ?? acc();
    this.#replayed.set(record.round, a);
    a.requests += 1;
    if (record.status === 'ok') {
      if (record.prompt_tokens !== null && !record.tokens_estimated) {
        a.prompt.push(record.prompt_tokens);
        this.#first(record, record.prompt_tokens);
      }
      if (record.completion_tokens !== null && !record.tokens_estimated) a.completion.push(record.completion_tokens);
      if (record.ttft_ms !== null) a.ttft.push(record.ttft_ms);
      a.e2e.push(record.e2e_ms);
    } else if (record.status === 'error') a.errors += 1;
    else a.hangs += 1;
    if (record.replay.answer === 'live') this.#answers.live += 1;
    if (record.replay.answer === 'substituted') this.#answers.substituted += 1;
    const sizing = record.replay.sizing;
    if (sizing !== undefined) {
      this.#sized[sizing.by] += 1;
      if (sizing.by === 'usage' || sizing.by === 'tokenize' || sizing.by === 'probe') this.#scales.push(sizing.scale);
    }
    this.#socket(record);
  }

  /** Pairs recorded connection ids with replayed socket ids one to one; a request matches when its socket is
   * its recorded connection's partner and it is the same nth request on it. */
  #socket(record: RequestRecord): void {
    const recorded = record.replay === undefined ? undefined : this.#bySeq.get(record.replay.seq);
    if (recorded === undefined || recorded.connection === null || record.conversation.includes('~')) return;
    this.#sockets.compared += 1;
    const mine = record.connection;
    if (mine === null) return;
    this.#replayedConnections.add(mine.id);
    const partner = this.#pairs.get(recorded.connection.id);
    const back = this.#pairedBack.get(mine.id);
    if (partner === undefined && back === undefined) {
      this.#pairs.set(recorded.connection.id, mine.id);
      this.#pairedBack.set(mine.id, recorded.connection.id);
    } else if (partner !== mine.id || back !== recorded.connection.id) return;
    if (mine.nth === recorded.connection.nth) this.#sockets.same += 1;
  }

  result(): ReplaySummary {
    const rounds = [...new Set([...this.#recorded.keys(), ...this.#replayed.keys()])].sort((a, b) => a - b);
    const recordedConnections = new Set([...this.#bySeq.values()].map((r) => r.connection?.id).filter((id) => id !== undefined));
    const comparisons = rounds.map((round): ReplayRoundComparison => {
      const recorded = side(this.#recorded.get(round) ?? acc(), false);
      const replayed = side(this.#replayed.get(round) ?? acc(), true);
      return {
        round,
        recorded,
        replayed,
        prompt_tokens_diff_pct: diffPct(recorded.prompt_tokens_mean, replayed.prompt_tokens_mean),
        completion_tokens_diff_pct: diffPct(recorded.completion_tokens_mean, replayed.completion_tokens_mean),
      };
    });
    const prompt = offBy(comparisons, 'prompt');
    const completion = offBy(comparisons, 'completion');
    return {
      ...this.#settings,
      conversations: { recorded: this.#recordedConversations, replayed: this.#conversations.size },
      requests: { recorded: this.#bySeq.size, replayed: this.#requests },
      answers: { ...this.#answers },
      sockets: { ...this.#sockets, recorded_connections: recordedConnections.size, replayed_connections: this.#replayedConnections.size },
      rounds: comparisons,
      match: {
        prompt_mean_abs_pct: prompt.meanAbs,
        prompt_worst: prompt.worst,
        completion_mean_abs_pct: completion.meanAbs,
        completion_worst: completion.worst,
        sized: { ...this.#sized },
        first_ratio: this.#firstRatio?.ratio ?? null,
        first_sized: this.#firstRatio?.by ?? null,
        scale_mean: this.#scales.length === 0 ? null : round3(this.#scales.reduce((a, b) => a + b, 0) / this.#scales.length),
      },
    };
  }
}
