// Which conversation a request belongs to. Named by a header the user chose (`--session-header`), or inferred:
// a request whose messages start with an earlier request's messages continues that conversation (the best
// candidate echoes its answer right after them). Pure: hashes and times in, assignments out.

export interface Assignment {
  conversation: string;
  round: number;
  /** Since the conversation's previous response ended; null on its first round. */
  thinkMs: number | null;
}

interface Known {
  id: string;
  rounds: number;
  /** Message hashes of its latest request. */
  messages: readonly string[];
  /** Hash of the answer to its latest request (null: no answer, e.g. an error). */
  answer: string | null;
  failed: boolean;
  startedAtMs: number;
  endedAtMs: number;
}

export interface RequestSeen {
  /** Hashes of the request's messages, in order. */
  messages: readonly string[];
  /** The `--session-header` value, when one is named and sent. */
  session: string | null;
  startedAtMs: number;
  endedAtMs: number;
  /** Hash of the answer (null when there was none). */
  answer: string | null;
  failed: boolean;
}

function startsWith(longer: readonly string[], prefix: readonly string[]): boolean {
  if (prefix.length > longer.length) return false;
  // The last hash first: it differs between most unrelated histories, so mismatches are found at once.
  for (let i = prefix.length - 1; i >= 0; i -= 1) if (longer[i] !== prefix[i]) return false;
  return true;
}

export class ConversationInference {
  readonly #all: Known[] = [];
  readonly #bySession = new Map<string, Known>();

  get count(): number {
    return this.#all.length;
  }

  /** Assigns a completed request (called in order of completion) and remembers it. */
  assign(seen: RequestSeen): Assignment {
    const known = seen.session !== null ? (this.#bySession.get(seen.session) ?? null) : this.#continued(seen);
    if (known === null) {
      const fresh: Known = { id: `c${this.#all.length + 1}`, rounds: 1, messages: seen.messages, answer: seen.answer, failed: seen.failed, startedAtMs: seen.startedAtMs, endedAtMs: seen.endedAtMs };
      this.#all.push(fresh);
      if (seen.session !== null) this.#bySession.set(seen.session, fresh);
      return { conversation: fresh.id, round: 1, thinkMs: null };
    }
    const thinkMs = seen.startedAtMs - known.endedAtMs;
    known.rounds += 1;
    known.messages = seen.messages;
    known.answer = seen.answer;
    known.failed = seen.failed;
    known.startedAtMs = seen.startedAtMs;
    known.endedAtMs = Math.max(known.endedAtMs, seen.endedAtMs);
    return { conversation: known.id, round: known.rounds, thinkMs: Math.max(0, thinkMs) };
  }

  /** The conversation this request continues, or null. A candidate ended before it started; its history is a
   * prefix of this one's (the same history only when its last round failed: a retry). Best: it echoes the
   * candidate's answer next, then the longest history, then the latest end. */
  #continued(seen: RequestSeen): Known | null {
    let best: Known | null = null;
    let bestScore = -1;
    for (const k of this.#all) {
      if (k.endedAtMs > seen.startedAtMs) continue;
      const n = k.messages.length;
      if (n === 0 || !startsWith(seen.messages, k.messages)) continue;
      if (n === seen.messages.length && !k.failed) continue;
      const echoes = k.answer !== null && seen.messages[n] === k.answer;
      const score = (echoes ? 1e12 : 0) + n * 1e6 + k.endedAtMs / 1e6;
      if (score > bestScore) {
        best = k;
        bestScore = score;
      }
    }
    return best;
  }
}
