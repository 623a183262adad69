// A replay agent: one recorded conversation sent round by round, each after the recorded think time (÷ speed)
// since the previous live answer ended, on the lane the caller picks for the round (the recorded connection's,
// under `connection: as-recorded`). Like runAgent it never throws: every outcome is a record.
import { performance } from 'node:perf_hooks';
import type { HangPolicy } from '../config/index.js';
import type { RunEvent } from '../types/index.js';
import type { Lane } from '../transport/index.js';
import { emitOutcome } from './loop.js';
import { ReplayBodies, type ReplayContents, type ShapeRequest } from './replay-body.js';
import { sendRound, type RoundTarget } from './round.js';
import { ConversationSizer, type ReplayCalibration } from './replay-size.js';
import { round3 } from '../util/index.js';

/** One recorded round, as the replay needs it. */
export interface ReplayRound {
  round: number;
  /** Since the conversation's previous response ended (null or ignored on its first round). */
  thinkMs: number | null;
  request: ShapeRequest;
  /** Recorded connection id (null when the trace does not know). */
  connection: number | null;
  /** How long that connection sat idle before this request (null: its first, or not known). */
  idleMs: number | null;
  /** Recorded `seq` (for the record's `replay` field). */
  seq: number;
  /** The server-reported prompt tokens of the recorded request (null: not reported): the size to reach. */
  promptTokens: number | null;
}

export interface ReplayAgentSpec {
  index: number;
  /** Conversation id in the records (the recorded one, `~2` and on for later passes of a loop). */
  conversation: string;
  rounds: readonly ReplayRound[];
  contents: ReplayContents;
  /** What the run has learnt of the server's tokens, shared by every conversation (replay-size.ts). */
  calibration: ReplayCalibration;
  /** Model sent when the recording names none, or always when `forceModel`. */
  model: string;
  forceModel: boolean;
  /** `target.extra_body`: added to every replayed body (the trace keeps no structured extras, such as
   * `chat_template_kwargs`, only their names), over a recorded field of the same name. @default {} */
  extraBody?: Readonly<Record<string, unknown>>;
  speed: number;
  target: RoundTarget;
  /** The lane round `i` goes out on. */
  laneFor: (round: ReplayRound) => Lane;
  phase: string;
  onHang: HangPolicy;
  emit: (event: RunEvent) => void;
  stop: AbortSignal;
  abortInFlight: AbortSignal;
  /** Awaited before a round is sent, at the same time as its think time (as-recorded: until the request
   * recorded before it on its connection has ended and the connection has sat idle as long as recorded), so a
   * round goes out at the later of its think time and its turn on the connection. */
  beforeRound?: (round: ReplayRound) => Promise<void>;
  /** Told when a round has ended (as-recorded connections close after their last one). */
  onRoundEnd?: (round: ReplayRound) => void;
}

/** Sends the conversation's rounds; resolves with how many requests it sent. */
export async function runReplayAgent(spec: ReplayAgentSpec): Promise<number> {
  const bodies = new ReplayBodies(spec.contents, spec.model, spec.forceModel, spec.extraBody, spec.calibration.pins);
  const sizer = new ConversationSizer(spec.calibration);
  let sent = 0;
  for (const [i, round] of spec.rounds.entries()) {
    if (spec.stop.aborted) break;
    const think = i > 0 && round.thinkMs !== null && round.thinkMs > 0 ? sleep(round.thinkMs / spec.speed, spec.stop) : null;
    const turn = spec.beforeRound?.(round) ?? null;
    if (think !== null || turn !== null) {
      await Promise.all([think, turn]);
      if (spec.stop.aborted) break;
    }
    const draft = bodies.draft(round.request);
    const sizing = await sizer.scale(draft, round.promptTokens);
    const built = draft.build(sizing.scale, sizing.by !== 'characters' && sizing.by !== 'verbatim');
    const target: RoundTarget = { ...spec.target, lane: spec.laneFor(round) };
    spec.emit({ kind: 'request_start', agent: spec.index, conversation: spec.conversation, round: round.round, run_ms: performance.now() - target.runStartMs });
    const outcome = await sendRound(target, { agent: spec.index, conversation: spec.conversation, round: round.round, phase: spec.phase, body: built.body }, spec.abortInFlight, {
      onHang: spec.onHang,
      onHangDetected: (snapshot) => spec.emit({ kind: 'hang', t: new Date().toISOString(), run_ms: snapshot.run_ms + snapshot.e2e_ms, record: snapshot }),
    });
    sent += 1;
    const { record } = outcome;
    emitOutcome(spec.emit, { ...record, replay: { seq: round.seq, connection: round.connection, answer: built.answer, sizing: { by: sizing.by, scale: round3(sizing.scale) } } });
    const usage = record.status === 'ok' && !record.tokens_estimated;
    sizer.observe(draft, built, round.promptTokens, usage ? record.prompt_tokens : null, usage ? record.completion_tokens : null);
    bodies.answered(outcome.message);
    spec.onRoundEnd?.(round);
    if (outcome.record.status === 'hang' && spec.onHang === 'abort-agent') break;
  }
  return sent;
}

/** A sleep that ends early (and quietly) when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
