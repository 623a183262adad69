// A replay against its recording, round by round: prompt tokens, TTFT, e2e, errors and hangs, recorded vs
// replayed, plus how answers were used and whether sockets were reused as recorded. Pure: records in, figures out.
import type { RequestRecord } from '../types/index.js';
import { round1 } from '../util/index.js';

/** What the comparison needs of one recorded request. */
export interface RecordedRequest {
  seq: number;
  conversation: string;
  round: number;
  connection: { id: number; nth: number } | null;
  prompt_tokens: number | null;
  ttft_ms: number | null;
  e2e_ms: number | null;
  error: boolean;
}

export interface ReplaySide {
  requests: number;
  /** Mean over the requests that reported it; null when none did. */
  prompt_tokens_mean: number | null;
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
}

interface Acc {
  requests: number;
  prompt: number[];
  ttft: number[];
  e2e: number[];
  errors: number;
  hangs: number;
}

const acc = (): Acc => ({ requests: 0, prompt: [], ttft: [], e2e: [], errors: 0, hangs: 0 });

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
  return { requests: a.requests, prompt_tokens_mean: mean(a.prompt), ttft_p50_ms: median(a.ttft), e2e_p50_ms: median(a.e2e), errors: a.errors, hangs: hangs ? a.hangs : null };
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
      if (record.prompt_tokens !== null && !record.tokens_estimated) a.prompt.push(record.prompt_tokens);
      if (record.ttft_ms !== null) a.ttft.push(record.ttft_ms);
      a.e2e.push(record.e2e_ms);
    } else if (record.status === 'error') a.errors += 1;
    else a.hangs += 1;
    if (record.replay.answer === 'live') this.#answers.live += 1;
    if (record.replay.answer === 'substituted') this.#answers.substituted += 1;
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
    return {
      ...this.#settings,
      conversations: { recorded: this.#recordedConversations, replayed: this.#conversations.size },
      requests: { recorded: this.#bySeq.size, replayed: this.#requests },
      answers: { ...this.#answers },
      sockets: { ...this.#sockets, recorded_connections: recordedConnections.size, replayed_connections: this.#replayedConnections.size },
      rounds: rounds.map((round) => {
        const recorded = side(this.#recorded.get(round) ?? acc(), false);
        const replayed = side(this.#replayed.get(round) ?? acc(), true);
        const r = recorded.prompt_tokens_mean;
        const p = replayed.prompt_tokens_mean;
        return { round, recorded, replayed, prompt_tokens_diff_pct: r === null || p === null || r === 0 ? null : round1(((p - r) / r) * 100) };
      }),
    };
  }
}
