// Sizing a replayed request's synthetic text so the server counts the recorded prompt tokens: the text is sized
// in characters, the server counts its own tokens, and synthetic words tokenize otherwise than the harness's
// text. A closed loop per conversation (each answer's usage.prompt_tokens tells how far off the request was; the
// next request's new text absorbs the error, history included), a run-wide estimate so conversations that
// start later start calibrated, and the server's rendering of the request (a tokenize endpoint), or else one
// probe request of the first request's exact shape, for the first rounds.
import type { BodyDraft } from './replay-body.js';

/** How a request's synthetic text was sized: its recorded characters (nothing known yet, or already right), a
 * density learnt from the server's usage, the server's tokenize endpoint, the usage of a probe request of its
 * exact shape (max_tokens 1, not part of the run), or not at all (recorded contents). */
export type SizedBy = 'characters' | 'usage' | 'tokenize' | 'probe' | 'verbatim';

/** What a replay learns of the server's tokens before its first request: its tokenize endpoint, or the usage
 * of one short chat request (max_tokens 1) made of synthetic text. */
export interface ServerTokenizer {
  /** `llama.cpp`: `POST /tokenize {content}` → `{tokens}`; `vllm`: `POST /tokenize {model, prompt}` →
   * `{count, tokens}` (SGLang answers the same way); `usage`: no endpoint, a chat request's usage. */
  kind: 'llama.cpp' | 'vllm' | 'usage';
  /** Tokens per character of synthetic text, measured on a sample. */
  tokensPerChar: number;
  /** The server's token count of a text (no chat template); null without a tokenize endpoint. */
  count: ((text: string) => Promise<number>) | null;
  /** The server's token count of a whole chat request as its chat template renders it (llama.cpp:
   * `POST /apply-template` then `/tokenize`; vLLM and SGLang: `POST /tokenize {model, messages, tools}`):
   * template tokens, tool instructions and role markers included. Null when the server has no such endpoint;
   * it rejects when the request cannot be rendered. */
  countRequest?: ((body: string) => Promise<number>) | null;
  /** Without a rendering endpoint: the server's count of a whole chat request from the usage of that request
   * sent once with max_tokens 1 (not part of the run). Used once per run, for the first first request. */
  probeRequest?: ((body: string) => Promise<number>) | null;
}

/** Chat-template tokens per message a raw tokenize does not count (role markers, separators): a guess, which
 * the usage of the first answer replaces. */
export const TEMPLATE_TOKENS_PER_MESSAGE = 4;
/** Bounds of a scale. Wide: besides the tokenizers' difference, a round's new text absorbs the error of the
 * history (a first round sent at its recorded characters may be half the tokens, and the next round's tool
 * result must then make up for it); beyond them the recording cannot be matched and the comparison says so. */
const MIN_SCALE = 0.05;
const MAX_SCALE = 20;
/** A prediction at the recorded size this close to the target keeps the recorded size (text unchanged). */
const KEEP_RECORDED = 0.01;
/** New text shorter than this tells too little of the server's density to learn from. */
const MIN_LEARN_CHARS = 200;
/** A conversation's own density is used once it has observed this much new text. */
const TRUST_OWN_CHARS = 5000;
/** The probe's sample counts as this much observed text in the run's density. */
const PROBE_WEIGHT_CHARS = 2000;

/** Tokens per character, summed over observations. */
class Density {
  tokens = 0;
  chars = 0;

  add(tokens: number, chars: number): void {
    if (chars <= 0 || tokens <= 0) return;
    this.tokens += tokens;
    this.chars += chars;
  }

  get value(): number | null {
    return this.chars === 0 ? null : this.tokens / this.chars;
  }
}

/** What a replay run has learnt of the server's tokens, shared by its conversations. */
export class ReplayCalibration {
  /** Whole requests with no history to subtract: tokens per character of all their text. */
  readonly body = new Density();
  /** A conversation's new text after its history: tokens per character. */
  readonly marginal = new Density();
  /** Sizes of synthetic messages sent scaled, by hash: equal messages stay equal text across conversations. */
  readonly pins = new Map<string, number>();
  /** The first observed request: recorded / observed prompt tokens (the "ratio after round 1"). */
  firstRatio: number | null = null;
  /** The probe of the run's first request (no rendering endpoint): what a first request counts beyond its text
   * at the synthetic density — template, tool instructions, JSON — and how many messages it had. Shared as a
   * promise: conversations that start while it is out wait for it. */
  overhead: Promise<{ tokens: number; messages: number } | null> | null = null;

  /** @param tokenizer the server's tokenize endpoint (null: none found, or not probed).
   * @param enabled false: every request at its recorded characters (`replay.sizing: characters`). */
  constructor(
    readonly tokenizer: ServerTokenizer | null,
    readonly enabled = true,
  ) {
    if (tokenizer !== null) this.marginal.add(tokenizer.tokensPerChar * PROBE_WEIGHT_CHARS, PROBE_WEIGHT_CHARS);
  }
}

/** How one request was sized. */
export interface Sizing {
  scale: number;
  by: SizedBy;
}

/** The density of a request's own synthetic text, counted by the tokenizer at about the scale it will be sent
 * at (words are drawn at random: a text's density differs from the sample's by a few percent). */
async function densityOf(draft: BodyDraft, sampleDensity: number, count: (text: string) => Promise<number>, tokensWanted: number): Promise<number> {
  const guess = Math.min(MAX_SCALE, Math.max(MIN_SCALE, tokensWanted / (sampleDensity * draft.scalableChars)));
  const text = draft.scaledText(guess);
  const tokens = text.length === 0 ? null : await count(text).catch(() => null);
  return tokens === null || tokens <= 0 ? sampleDensity : tokens / text.length;
}

/** A first request sized by the server's rendering of it: the whole request at a guessed scale, as the chat
 * template renders it, counted; its synthetic text counted alone; the rest (template, tools, fixed text) is known. */
async function renderedModel(
  draft: BodyDraft,
  sampleDensity: number,
  countRequest: (body: string) => Promise<number>,
  count: (text: string) => Promise<number>,
  tokensWanted: number,
): Promise<{ known: number; density: number; otherChars: number; by: SizedBy }> {
  const guess = Math.min(MAX_SCALE, Math.max(MIN_SCALE, tokensWanted / (sampleDensity * draft.scalableChars)));
  const text = draft.scaledText(guess);
  const [whole, scaled] = await Promise.all([countRequest(draft.preview(guess)), text.length === 0 ? 0 : count(text)]);
  const density = scaled > 0 && text.length > 0 ? scaled / text.length : sampleDensity;
  return { known: whole - density * text.length, density, otherChars: 0, by: 'tokenize' };
}

/** The run's first request sized by a probe of its exact shape (max_tokens 1): the body at a guessed scale,
 * counted by the server's usage; its synthetic text at the sample's density; the rest is the overhead. */
async function probedModel(draft: BodyDraft, density: number, probe: (body: string) => Promise<number>, tokensWanted: number): Promise<{ known: number; overhead: number }> {
  const guess = Math.min(MAX_SCALE, Math.max(MIN_SCALE, tokensWanted / (density * draft.scalableChars)));
  const whole = await probe(draft.preview(guess));
  const known = whole - density * draft.scaledText(guess).length;
  return { known, overhead: known - density * draft.fixedText().length };
}

/** What a later round's prompt holds besides the new text a density sizes: the history (the server counted
 * it last round), the live answer re-sent (its completion tokens, when the server reported them), and the
 * template tokens of each other new message (a guess: role markers a density of characters does not know). */
function newKnown(draft: BodyDraft, last: { prompt: number; completion: number | null }): { known: number; otherChars: number } {
  const live = draft.liveChars > 0 && last.completion !== null && last.completion > 0 ? last.completion : null;
  const templated = draft.messages - draft.echoed - (live === null ? 0 : 1);
  return { known: last.prompt + (live ?? 0) + TEMPLATE_TOKENS_PER_MESSAGE * templated, otherChars: draft.newFixedChars - (live === null ? 0 : draft.liveChars) };
}

/** One conversation's closed loop: sizes each request's new synthetic text to reach the recorded prompt
 * tokens, and learns from each answer's usage. */
export class ConversationSizer {
  readonly #shared: ReplayCalibration;
  readonly #marginal = new Density();
  /** The last request's observed prompt tokens and its answer's completion tokens (null: unknown). */
  #last: { prompt: number; completion: number | null } | null = null;

  constructor(shared: ReplayCalibration) {
    this.#shared = shared;
  }

  /** The scale for `draft`'s new synthetic text so the server counts about `recordedTokens`. */
  async scale(draft: BodyDraft, recordedTokens: number | null): Promise<Sizing> {
    if (draft.scalableChars === 0) return { scale: 1, by: draft.verbatim ? 'verbatim' : 'characters' };
    if (!this.#shared.enabled || recordedTokens === null || recordedTokens <= 0) return { scale: 1, by: 'characters' };
    const model = await this.#predictor(draft, recordedTokens);
    if (model === null) return { scale: 1, by: 'characters' };
    const atRecorded = model.known + model.density * (model.otherChars + draft.scalableChars);
    if (Math.abs(atRecorded - recordedTokens) <= KEEP_RECORDED * recordedTokens) return { scale: 1, by: model.by };
    const scale = (recordedTokens - model.known - model.density * model.otherChars) / (model.density * draft.scalableChars);
    return { scale: Math.min(MAX_SCALE, Math.max(MIN_SCALE, scale)), by: model.by };
  }

  /** Predicted tokens = known + density × (otherChars + scaled chars), from the best knowledge at hand. */
  async #predictor(draft: BodyDraft, recordedTokens: number): Promise<{ known: number; density: number; otherChars: number; by: SizedBy } | null> {
    const shared = this.#shared;
    const tokenizer = shared.tokenizer;
    // The server renders the request with its chat template (llama.cpp's /apply-template): every round is sized
    // by the request as it will count it — template tokens of new messages included, which no density knows.
    if (tokenizer?.countRequest != null && tokenizer.count !== null) {
      const rendered = await renderedModel(draft, tokenizer.tokensPerChar, tokenizer.countRequest, tokenizer.count, recordedTokens).catch(() => null);
      if (rendered !== null) return rendered;
    }
    // No rendering endpoint: the first first request is probed once as it will be sent; the template's
    // overhead it shows sizes every conversation's first request (a raw density misses it: +13% seen).
    if (draft.echoed === 0 && tokenizer?.probeRequest != null) {
      const probed = await this.#probed(draft, tokenizer.tokensPerChar, tokenizer.probeRequest, recordedTokens);
      if (probed !== null) return probed;
    }
    if (draft.echoed > 0 && this.#last !== null) {
      // The history's tokens are known: the server counted them last round; so are its live answer's, re-sent
      // here (its completion tokens). The other new text is counted at the density learnt so far.
      const { known, otherChars } = newKnown(draft, this.#last);
      // This conversation's own density once it has seen enough text; before, the run's (which includes it):
      // synthetic words are drawn at random, so a few hundred characters' density varies by several percent.
      const own = this.#marginal.chars >= TRUST_OWN_CHARS ? this.#marginal.value : null;
      const density = own ?? shared.marginal.value ?? tokenizer?.tokensPerChar ?? shared.body.value;
      if (density === null) return null;
      return { known, density, otherChars, by: 'usage' };
    }
    if (shared.body.value !== null) return { known: 0, density: shared.body.value, otherChars: draft.fixedText().length, by: 'usage' };
    if (tokenizer === null) return null;
    const template = TEMPLATE_TOKENS_PER_MESSAGE * draft.messages;
    const count = tokenizer.count;
    if (count === null) return { known: template, density: tokenizer.tokensPerChar, otherChars: draft.fixedText().length, by: 'usage' };
    const fixed = await count(draft.fixedText()).catch(() => null);
    if (fixed === null) return { known: template, density: tokenizer.tokensPerChar, otherChars: draft.fixedText().length, by: 'tokenize' };
    return { known: fixed + template, density: await densityOf(draft, tokenizer.tokensPerChar, count, recordedTokens - fixed - template), otherChars: 0, by: 'tokenize' };
  }

  /** The probe's model of a first request: the request that probes gets its own count; the others the
   * overhead it measured (plus the template guess for each message more or fewer) and the run's density. */
  async #probed(
    draft: BodyDraft,
    sampleDensity: number,
    probe: (body: string) => Promise<number>,
    recordedTokens: number,
  ): Promise<{ known: number; density: number; otherChars: number; by: SizedBy } | null> {
    const shared = this.#shared;
    if (shared.overhead === null) {
      const mine = probedModel(draft, sampleDensity, probe, recordedTokens).catch(() => null);
      shared.overhead = mine.then((m) => (m === null ? null : { tokens: m.overhead, messages: draft.messages }));
      const model = await mine;
      return model === null ? null : { known: model.known, density: sampleDensity, otherChars: 0, by: 'probe' };
    }
    const overhead = await shared.overhead;
    if (overhead === null) return null;
    // The sample's density, which the overhead was measured against (the run's marginal one holds live answers).
    const density = sampleDensity;
    const known = overhead.tokens + TEMPLATE_TOKENS_PER_MESSAGE * (draft.messages - overhead.messages);
    return { known, density, otherChars: draft.fixedText().length, by: 'probe' };
  }

  /** What the server counted for the request built from `draft` (null: no usage; the next request then sizes
   * without a known history). */
  observe(draft: BodyDraft, sent: { scaledChars: number }, recordedTokens: number | null, promptTokens: number | null, completionTokens: number | null = null): void {
    const last = this.#last;
    this.#last = promptTokens === null ? null : { prompt: promptTokens, completion: completionTokens };
    if (promptTokens === null) return;
    const shared = this.#shared;
    if (shared.firstRatio === null && recordedTokens !== null && promptTokens > 0) shared.firstRatio = recordedTokens / promptTokens;
    if (draft.echoed > 0 && last !== null) {
      const { known, otherChars } = newKnown(draft, last);
      const newTokens = promptTokens - known;
      const newChars = otherChars + sent.scaledChars;
      if (newChars < MIN_LEARN_CHARS) return;
      this.#marginal.add(newTokens, newChars);
      shared.marginal.add(newTokens, newChars);
    } else {
      shared.body.add(promptTokens, draft.fixedText().length + sent.scaledChars);
    }
  }
}
