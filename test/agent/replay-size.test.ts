import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConversationSizer, ReplayBodies, ReplayCalibration, type ShapeRequest } from '../../src/agent/index.js';
import type { AssembledMessage } from '../../src/stream/index.js';

const NO_CONTENTS = { messages: new Map(), tools: new Map() };

/** A server that counts 0.15 tokens a character of the text it gets and 3 a message (roundload guesses 0.25). */
function serverTokens(body: string): number {
  const b = JSON.parse(body) as { messages: { content: string | null; tool_calls?: { function: { arguments: string } }[] }[]; tools?: unknown };
  let chars = b.tools === undefined ? 0 : JSON.stringify(b.tools).length;
  for (const m of b.messages) chars += (m.content ?? '').length + (m.tool_calls ?? []).reduce((a, c) => a + c.function.arguments.length, 0);
  return Math.round(0.15 * chars) + 3 * b.messages.length;
}

function shape(messages: ShapeRequest['messages']): ShapeRequest {
  return { model: 'm', stream: true, stream_options: null, max_tokens: 64, max_tokens_key: 'max_tokens', tool_choice: null, messages, tools: null, extra: {} };
}

const answer = (content: string): AssembledMessage => ({ content, reasoning: '', toolCalls: [], finishReason: 'stop', usage: null, sawDone: true, problems: [], violations: [] });

/** Rounds of a conversation: a shared system prompt, then user turns of `n`-specific text and answers of 200
 * characters; the harness's text counted 0.3 tokens a character (recorded prompt tokens). */
function conversation(n: number, rounds: number): { shape: ShapeRequest; recorded: number }[] {
  const messages: ShapeRequest['messages'] = [{ role: 'system', chars: 4000, hash: 'S' }];
  const out: { shape: ShapeRequest; recorded: number }[] = [];
  for (let r = 1; r <= rounds; r += 1) {
    if (r > 1) messages.push({ role: 'assistant', chars: 200, hash: `A${n}.${r - 1}` });
    messages.push({ role: 'user', chars: 600 + 300 * r, hash: `U${n}.${r}` });
    const chars = messages.reduce((a, m) => a + m.chars, 0);
    out.push({ shape: shape([...messages]), recorded: Math.round(0.3 * chars) + 3 * messages.length });
  }
  return out;
}

/** Replays one conversation against `serverTokens`; returns each round's % off and the bodies sent. */
async function replay(calibration: ReplayCalibration, n: number, rounds: number, count = serverTokens): Promise<{ off: number[]; bodies: string[] }> {
  const bodies = new ReplayBodies(NO_CONTENTS, 'm', false, {}, calibration.pins);
  const sizer = new ConversationSizer(calibration);
  const off: number[] = [];
  const sent: string[] = [];
  for (const { shape: s, recorded } of conversation(n, rounds)) {
    const draft = bodies.draft(s);
    const sizing = await sizer.scale(draft, recorded);
    const built = draft.build(sizing.scale, sizing.by !== 'characters');
    const observed = count(built.body);
    off.push(((observed - recorded) / recorded) * 100);
    sent.push(built.body);
    const text = 'x'.repeat(200);
    bodies.answered(answer(text));
    sizer.observe(draft, built, recorded, observed);
  }
  return { off, bodies: sent };
}

test('from the usage alone: round 1 is off by the tokenizers’ difference, every later round within ±3% of the recorded prompt tokens', async () => {
  const calibration = new ReplayCalibration(null);
  const { off } = await replay(calibration, 1, 5);
  assert.ok(off[0]! < -30, `round 1 at recorded characters: ${off[0]}%`);
  for (const [i, pct] of off.entries()) if (i > 0) assert.ok(Math.abs(pct) <= 3, `round ${i + 1}: ${pct.toFixed(1)}%`);
  assert.ok(calibration.firstRatio! > 1.5, `ratio after round 1: ${calibration.firstRatio}`);
});

test('a conversation that starts after the run has learnt starts calibrated, and later ones send the same system prompt byte for byte', async () => {
  const calibration = new ReplayCalibration(null);
  await replay(calibration, 1, 3);
  const second = await replay(calibration, 2, 3);
  const third = await replay(calibration, 3, 3);
  for (const { off } of [second, third]) for (const pct of off) assert.ok(Math.abs(pct) <= 3, `${off.map((p) => p.toFixed(1)).join(' ')}`);
  const system = (body: string): string => (JSON.parse(body) as { messages: { content: string }[] }).messages[0]!.content;
  assert.equal(system(second.bodies[0]!), system(third.bodies[0]!));
  assert.ok(system(second.bodies[0]!).length > 4000 * 1.5, 'scaled to the server');
});

test('with the server’s tokenize endpoint the first round is within ±3% too', async () => {
  const count = (text: string): Promise<number> => Promise.resolve(Math.round(0.15 * text.length));
  const calibration = new ReplayCalibration({ kind: 'llama.cpp', tokensPerChar: 0.15, count });
  const { off } = await replay(calibration, 1, 4);
  for (const pct of off) assert.ok(Math.abs(pct) <= 3, `${off.map((p) => p.toFixed(1)).join(' ')}`);
});

test('sizing by characters (or a server already counting like the recording) leaves the text at its recorded length', async () => {
  const off = (await replay(new ReplayCalibration(null, false), 1, 3)).off;
  assert.ok(off.every((p) => p < -30));
  const bodies = new ReplayBodies(NO_CONTENTS, 'm');
  const sizer = new ConversationSizer(new ReplayCalibration({ kind: 'usage', tokensPerChar: 0.3, count: null }));
  const [first] = conversation(1, 1);
  assert.deepEqual(await sizer.scale(bodies.draft(first!.shape), first!.recorded), { scale: 1, by: 'usage' });
});

test('without a rendering endpoint one probe of the first request, shared by conversations that start while it is out, sizes every first round within ±3%', async () => {
  let probes = 0;
  // A template that adds 120 tokens of instructions to every request, which no density of text knows.
  const withInstructions = (body: string): number => serverTokens(body) + 120;
  // The probe answers after a while: the other conversations ask for their first sizing meanwhile.
  const probeRequest = async (body: string): Promise<number> => {
    probes += 1;
    await new Promise((resolve) => setTimeout(resolve, 20));
    return withInstructions(body);
  };
  // The sample's density: 0.15 a character, as the server counts synthetic text.
  const calibration = new ReplayCalibration({ kind: 'usage', tokensPerChar: 0.15, count: null, probeRequest });
  const runs = await Promise.all([1, 2, 3].map((n) => replay(calibration, n, 3, withInstructions)));
  assert.equal(probes, 1, 'one probe for the run');
  for (const [n, { off }] of runs.entries()) {
    for (const [i, pct] of off.entries()) assert.ok(Math.abs(pct) <= 3, `conversation ${n + 1}, round ${i + 1}: ${pct.toFixed(1)}%`);
  }
  // Without the probe the same first rounds miss the instructions.
  const unprobed = await replay(new ReplayCalibration({ kind: 'usage', tokensPerChar: 0.15, count: null }), 1, 1, withInstructions);
  assert.ok(unprobed.off[0]! > 4, `round 1 without the probe: ${unprobed.off[0]}%`);
});
