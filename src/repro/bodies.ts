// The request bodies of a reproducer: synthetic text sized to each recorded `request_bytes`. The generator is
// JavaScript source, written once here: repro.mjs embeds it, and `roundload repro` runs the same text (imported
// from a data: URL) to write the curl script's body files, so both scripts send byte-identical bodies.

/** What the generator reads from the plan. */
export interface BodyPlan {
  /** Every body field but `messages`, in order (model, stream, max_tokens, tools, extra_body…). */
  head: Record<string, unknown>;
  /** Size of the system prompt all conversations share (characters), at most half a body. */
  system_chars: number;
  requests: readonly { conversation: string; bytes: number; answer_chars: number }[];
}

/**
 * `buildBodies(plan)`: one JSON body per request, each exactly `bytes` long when that is above the smallest
 * possible body. A conversation's next round keeps its previous messages (a prefix the server can cache, as in
 * the run) and appends an assistant answer of the recorded size and a user turn that fills the rest; a resend of
 * the same size repeats the body; a smaller one starts the conversation afresh. Text is lower-case words and
 * spaces (nothing JSON escapes), from a seeded generator: the same plan gives the same bytes.
 */
export const BODY_JS = String.raw`
const BODY_WORDS = ['the', 'request', 'socket', 'stream', 'token', 'agent', 'round', 'proxy', 'engine', 'queue',
  'prefill', 'decode', 'cache', 'header', 'answer', 'tool', 'result', 'file', 'line', 'value', 'check', 'time',
  'wait', 'state', 'batch', 'model', 'reply', 'data', 'path', 'node', 'read', 'write', 'open', 'close', 'keep',
  'alive', 'again', 'small', 'large', 'under', 'load'];

function bodySeed(text) {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
  return h;
}

/** Exactly chars characters of words, the same for the same seed. */
function bodyText(seed, chars) {
  let state = bodySeed(seed);
  const parts = [];
  let length = 0;
  // length counts a space after every word, one more than the join has.
  while (length - 1 < chars) {
    state = (Math.imul(state ^ (state >>> 15), 2246822507) + 0x9e3779b9) >>> 0;
    const word = BODY_WORDS[state % BODY_WORDS.length];
    parts.push(word);
    length += word.length + 1;
  }
  return parts.join(' ').slice(0, Math.max(0, chars));
}

function bodyMessage(role, seed, chars) {
  return JSON.stringify({ role: role, content: bodyText(seed, chars) });
}

export function buildBodies(plan) {
  const headJson = JSON.stringify(plan.head);
  const open = headJson.slice(0, -1) + (headJson === '{}' ? '' : ',') + '"messages":[';
  const sizeOf = (messages) => open.length + messages.reduce((n, m) => n + m.length, 0) + Math.max(0, messages.length - 1) + 2;
  const emptyUser = bodyMessage('user', '', 0).length;
  const conversations = new Map();
  const bodies = [];
  plan.requests.forEach((r, i) => {
    const before = conversations.get(r.conversation);
    if (before !== undefined && before.bytes === r.bytes) {
      bodies.push(before.body);
      return;
    }
    let kept;
    if (before !== undefined && r.bytes > before.bytes) {
      const room = r.bytes - before.bytes - emptyUser - bodyMessage('assistant', '', 0).length - 2;
      const answer = Math.max(0, Math.min(before.answer_chars, Math.floor(room / 2)));
      kept = before.messages.concat([bodyMessage('assistant', r.conversation + '/a' + i, answer)]);
    } else {
      const room = r.bytes - open.length - 3 - emptyUser - bodyMessage('system', '', 0).length;
      kept = [bodyMessage('system', 'system', Math.max(0, Math.min(plan.system_chars, Math.floor(room / 2))))];
    }
    const fill = Math.max(0, r.bytes - sizeOf(kept.concat([bodyMessage('user', '', 0)])));
    const messages = kept.concat([bodyMessage('user', r.conversation + '/u' + i, fill)]);
    const body = open + messages.join(',') + ']}';
    conversations.set(r.conversation, { bytes: body.length, body: body, messages: messages, answer_chars: r.answer_chars });
    bodies.push(body);
  });
  return bodies;
}
`;

/** The generator above, run here (from a data: URL) to write the curl script's bodies. */
export async function buildBodies(plan: BodyPlan): Promise<string[]> {
  const url = `data:text/javascript;base64,${Buffer.from(BODY_JS).toString('base64')}`;
  const mod = (await import(url)) as { buildBodies: (p: BodyPlan) => string[] };
  return mod.buildBodies(plan);
}
