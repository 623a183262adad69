import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ChatStreamParser, type StreamEvent } from '../../src/stream/index.js';
import { runWhole, runPieces } from './collect.js';
import { contentAnswer, crlfAnswer, invalidJsonThenValid, midStreamError, multiByte, reasoningThenContent, singleToolCall, twoToolCalls, unterminatedLastEvent, withComments } from './fixtures.js';

/** Events of a body made of single-line data events. */
function eventsOf(...data: string[]): StreamEvent[] {
  return runWhole(data.map((d) => `data: ${d}\n\n`).join('')).events;
}

describe('ChatStreamParser on SGLang-shaped bodies', () => {
  it('a content answer yields role, content pieces, finish, usage with cached tokens, then done', () => {
    const { events, dataEvents, bytes } = runWhole(contentAnswer.body);
    assert.deepEqual(events, [
      { kind: 'role', role: 'assistant' },
      { kind: 'content', text: 'Hello' },
      { kind: 'content', text: ', world' },
      { kind: 'content', text: '!' },
      { kind: 'finish', reason: 'stop' },
      { kind: 'usage', promptTokens: 412, completionTokens: 4, cachedTokens: 384, reasoningTokens: null },
      { kind: 'done' },
    ]);
    assert.equal(dataEvents, 7);
    assert.equal(bytes, Buffer.byteLength(contentAnswer.body));
  });

  it('reasoning_content comes out as reasoning events before the content, and null prompt_tokens_details gives null cached tokens', () => {
    const { events } = runWhole(reasoningThenContent.body);
    assert.deepEqual(events, [
      { kind: 'role', role: 'assistant' },
      { kind: 'reasoning', text: 'The user wants' },
      { kind: 'reasoning', text: ' a number.' },
      { kind: 'content', text: '42' },
      { kind: 'finish', reason: 'stop' },
      { kind: 'usage', promptTokens: 57, completionTokens: 4, cachedTokens: null, reasoningTokens: null },
      { kind: 'done' },
    ]);
  });

  it('a fragmented tool call keeps id and name on the first fragment and reads a missing index as 0', () => {
    const { events } = runWhole(singleToolCall.body);
    assert.deepEqual(events, [
      { kind: 'role', role: 'assistant' },
      { kind: 'tool_call_delta', index: 0, id: 'call_a1b2c3', name: 'read_file', arguments: '' },
      { kind: 'tool_call_delta', index: 0, id: null, name: null, arguments: '{"path": ' },
      { kind: 'tool_call_delta', index: 0, id: null, name: null, arguments: '"src/main.ts"' },
      { kind: 'tool_call_delta', index: 0, id: null, name: null, arguments: '}' },
      { kind: 'finish', reason: 'tool_calls' },
      { kind: 'usage', promptTokens: 1200, completionTokens: 21, cachedTokens: null, reasoningTokens: null },
      { kind: 'done' },
    ]);
  });

  it('two interleaved tool calls keep their indexes, several fragments in one chunk in order, then finish', () => {
    const deltas = runWhole(twoToolCalls.body).events.filter((e) => e.kind === 'tool_call_delta' || e.kind === 'finish');
    assert.deepEqual(deltas, [
      { kind: 'tool_call_delta', index: 0, id: 'call_0', name: 'grep', arguments: '{"pattern":' },
      { kind: 'tool_call_delta', index: 1, id: 'call_1', name: 'list_dir', arguments: '' },
      { kind: 'tool_call_delta', index: 1, id: null, name: null, arguments: '{"dir":' },
      { kind: 'tool_call_delta', index: 0, id: null, name: null, arguments: '"TODO"}' },
      { kind: 'tool_call_delta', index: 1, id: null, name: null, arguments: '"src"' },
      { kind: 'tool_call_delta', index: 1, id: null, name: null, arguments: '}' },
      { kind: 'finish', reason: 'tool_calls' },
    ]);
  });

  it('a data: {"error": ...} chunk on a 200 stream is a server_error with message, type and code', () => {
    const { events } = runWhole(midStreamError.body);
    assert.deepEqual(events, [
      { kind: 'role', role: 'assistant' },
      { kind: 'content', text: 'Partial' },
      { kind: 'server_error', message: 'KV transfer failed for request 9f4c1e2a', type: 'InternalServerError', code: 500 },
      { kind: 'done' },
    ]);
  });

  it('an invalid JSON chunk is reported as malformed invalid_json with a sample, and the stream carries on', () => {
    const { events, dataEvents } = runWhole(invalidJsonThenValid.body);
    assert.equal(dataEvents, 5);
    const bad = events[1];
    assert.ok(bad !== undefined && bad.kind === 'malformed');
    assert.equal(bad.problem, 'invalid_json');
    assert.ok(bad.sample.startsWith('{"id":"9f4c1e2a'), bad.sample);
    assert.ok(bad.sample.length <= 200);
    assert.deepEqual(events.slice(2), [{ kind: 'content', text: 'kept' }, { kind: 'finish', reason: 'stop' }, { kind: 'done' }]);
  });

  it('CRLF line ends give the same events as LF', () => {
    assert.deepEqual(runWhole(crlfAnswer.body).events, runWhole(contentAnswer.body).events);
  });

  it('comment lines become comment events and events of other types are ignored', () => {
    const { events, dataEvents } = runWhole(withComments.body);
    assert.deepEqual(events, [
      { kind: 'comment', text: 'ping' },
      { kind: 'role', role: 'assistant' },
      { kind: 'content', text: 'Hi' },
      { kind: 'comment', text: 'engine-first-token-ms=12' },
      { kind: 'comment', text: 'ping' },
      { kind: 'content', text: ' there' },
      { kind: 'finish', reason: 'stop' },
      { kind: 'done' },
    ]);
    assert.equal(dataEvents, 3);
  });

  it('multi-byte characters come through intact and a chunk with content, finish and usage yields all three in order', () => {
    const { events } = runWhole(multiByte.body);
    assert.deepEqual(events, [
      { kind: 'role', role: 'assistant' },
      { kind: 'content', text: 'héllo 👋' },
      { kind: 'content', text: ' 世界 🧑‍💻' },
      { kind: 'content', text: ' ✓' },
      { kind: 'finish', reason: 'stop' },
      { kind: 'usage', promptTokens: 9, completionTokens: 7, cachedTokens: null, reasoningTokens: null },
      { kind: 'done' },
    ]);
  });

  it('a 4-byte emoji split between two network chunks decodes as one character', () => {
    const bytes = Buffer.from('data: {"choices":[{"delta":{"content":"👋"}}]}\n\n', 'utf8');
    const at = bytes.indexOf(0xf0) + 2;
    assert.deepEqual(runPieces([bytes.subarray(0, at), bytes.subarray(at)]).events, [{ kind: 'content', text: '👋' }]);
  });

  it('a body that ends before the blank line after its last event reports sse_syntax and drops that event', () => {
    const { events, dataEvents } = runWhole(unterminatedLastEvent.body);
    assert.equal(dataEvents, 1);
    assert.deepEqual(events.slice(0, 3), [
      { kind: 'role', role: 'assistant' },
      { kind: 'content', text: 'ok' },
      { kind: 'finish', reason: 'stop' },
    ]);
    const last = events[3];
    assert.ok(last !== undefined && last.kind === 'malformed');
    assert.equal(last.problem, 'sse_syntax');
    assert.equal(last.sample, '[DONE]');
    assert.equal(events.length, 4);
  });

  it('a body cut in the middle of a line reports sse_syntax', () => {
    const { events } = runWhole('data: {"choices":[]}\n\ndata: {"choi');
    assert.equal(events.length, 1);
    assert.equal(events[0]?.kind, 'malformed');
  });

  it('lines with a field SSE does not know (or a bad retry) are ignored, as the SSE rules say, and counted', () => {
    const events: StreamEvent[] = [];
    const parser = new ChatStreamParser((e) => events.push(e));
    parser.feed(Buffer.from('garbage here\n<html>\nretry: soon\nfoo: bar\ndata: {"choices":[{"delta":{"content":"a"}}]}\n\n'));
    parser.end();
    assert.deepEqual(events, [{ kind: 'content', text: 'a' }]);
    assert.equal(parser.ignoredLines, 4);
    assert.equal(parser.firstIgnoredLine, 'garbage here');
    assert.equal(parser.dataEvents, 1);
  });

  it('an HTML page sent as an event stream yields no events, only ignored lines (even its unterminated last line)', () => {
    const events: StreamEvent[] = [];
    const parser = new ChatStreamParser((e) => events.push(e));
    parser.feed(Buffer.from('<html>\n<body>502 Bad Gateway</body>\n</html>'));
    parser.end();
    assert.deepEqual(events, []);
    assert.equal(parser.ignoredLines, 3);
  });

  it('`event: error` is a server_error with the message of its data, in either error shape or as plain text', () => {
    assert.deepEqual(runWhole('event: error\ndata: {"error": {"message": "KV transfer failed", "type": "InternalServerError", "code": 500}}\n\n').events, [
      { kind: 'server_error', message: 'KV transfer failed', type: 'InternalServerError', code: 500 },
    ]);
    assert.deepEqual(runWhole('event: error\ndata: {"object": "error", "message": "bad input", "type": "BadRequestError", "param": null, "code": 400}\n\n').events, [
      { kind: 'server_error', message: 'bad input', type: 'BadRequestError', code: 400 },
    ]);
    assert.deepEqual(runWhole('event: error\ndata: upstream went away\n\n').events, [{ kind: 'server_error', message: 'upstream went away', type: null, code: null }]);
    // Cut before its blank line, the error still says what the server said.
    assert.deepEqual(runWhole('event: error\ndata: overloaded').events, [{ kind: 'server_error', message: 'overloaded', type: null, code: null }]);
  });

  it('other named events are still ignored and not counted as data events', () => {
    const { events, dataEvents } = runWhole('event: ping\ndata: {}\n\ndata: [DONE]\n\n');
    assert.deepEqual(events, [{ kind: 'done' }]);
    assert.equal(dataEvents, 1);
  });

  it('a lone CR ends lines, including a CR as the last byte of the body', () => {
    const { events } = runWhole('data: {"choices":[{"delta":{"content":"a"}}]}\r\rdata: [DONE]\r\r');
    assert.deepEqual(events, [{ kind: 'content', text: 'a' }, { kind: 'done' }]);
  });

  it('an event ended by a lone CR at the end of a network chunk comes out when the next chunk arrives, even one without a line end', () => {
    const events: StreamEvent[] = [];
    const parser = new ChatStreamParser((e) => events.push(e));
    parser.feed(Buffer.from('data: [DONE]\r\r'));
    parser.feed(Buffer.from('dat'));
    assert.deepEqual(events, [{ kind: 'done' }]);
  });

  it('bytes fed after end() are ignored', () => {
    const events: StreamEvent[] = [];
    const parser = new ChatStreamParser((e) => events.push(e));
    parser.feed(Buffer.from('data: [DONE]\n\n'));
    parser.end();
    parser.feed(Buffer.from('data: [DONE]\n\n'));
    parser.end();
    assert.deepEqual(events, [{ kind: 'done' }]);
    assert.equal(parser.bytes, 14);
  });
});

describe('ChatStreamParser on single chunk shapes', () => {
  it('empty and null content give no event; role and content in one chunk give role then content', () => {
    assert.deepEqual(eventsOf('{"choices":[{"delta":{"content":""}}]}', '{"choices":[{"delta":{"content":null}}]}'), []);
    assert.deepEqual(eventsOf('{"choices":[{"index":0,"delta":{"role":"assistant","content":"x"}}]}'), [
      { kind: 'role', role: 'assistant' },
      { kind: 'content', text: 'x' },
    ]);
  });

  it('usage next to a non-empty choice follows the choice events', () => {
    assert.deepEqual(eventsOf('{"choices":[{"delta":{"content":"x"},"finish_reason":"length"}],"usage":{"prompt_tokens":1,"completion_tokens":2}}'), [
      { kind: 'content', text: 'x' },
      { kind: 'finish', reason: 'length' },
      { kind: 'usage', promptTokens: 1, completionTokens: 2, cachedTokens: null, reasoningTokens: null },
    ]);
  });

  it("reasoning tokens are read from usage in either spelling: SGLang's top-level reasoning_tokens or completion_tokens_details", () => {
    const usageOf = (usage: string) => eventsOf(`{"choices":[],"usage":${usage}}`)[0];
    assert.deepEqual(usageOf('{"prompt_tokens":9,"completion_tokens":50,"total_tokens":59,"prompt_tokens_details":null,"reasoning_tokens":41}'), {
      kind: 'usage',
      promptTokens: 9,
      completionTokens: 50,
      cachedTokens: null,
      reasoningTokens: 41,
    });
    assert.deepEqual(usageOf('{"prompt_tokens":9,"completion_tokens":50,"completion_tokens_details":{"reasoning_tokens":38}}'), {
      kind: 'usage',
      promptTokens: 9,
      completionTokens: 50,
      cachedTokens: null,
      reasoningTokens: 38,
    });
    // Neither, or not a count: not reported (null), never 0.
    assert.deepEqual(usageOf('{"prompt_tokens":9,"completion_tokens":50,"completion_tokens_details":null,"reasoning_tokens":"x"}'), {
      kind: 'usage',
      promptTokens: 9,
      completionTokens: 50,
      cachedTokens: null,
      reasoningTokens: null,
    });
  });

  it('a tool-call fragment without arguments gives an empty arguments string', () => {
    assert.deepEqual(eventsOf('{"choices":[{"delta":{"tool_calls":[{"index":2,"id":"c","function":{"name":"f"}}]}}]}'), [{ kind: 'tool_call_delta', index: 2, id: 'c', name: 'f', arguments: '' }]);
  });

  it('unknown extra fields are ignored', () => {
    assert.deepEqual(eventsOf('{"x":1,"choices":[{"delta":{"content":"a","weird":[1]},"hidden_states":null,"finish_reason":null}],"system_fingerprint":"fp"}'), [{ kind: 'content', text: 'a' }]);
  });

  it('an object without choices, usage or error is unexpected_shape, and so is JSON that is not an object', () => {
    const events = eventsOf('{"id":"x","object":"chat.completion.chunk"}', '42', '[1,2]', 'null');
    assert.deepEqual(
      events.map((e) => (e.kind === 'malformed' ? e.problem : e.kind)),
      ['unexpected_shape', 'unexpected_shape', 'unexpected_shape', 'unexpected_shape'],
    );
  });

  it('wrongly typed fields are unexpected_shape and the rest of the chunk is still read', () => {
    const events = eventsOf('{"choices":[{"delta":{"role":"assistant","content":7},"finish_reason":"stop"}]}');
    assert.deepEqual(
      events.map((e) => e.kind),
      ['role', 'malformed', 'finish'],
    );
  });

  it('an error given as the chunk itself (object: "error") or as a string is a server_error', () => {
    assert.deepEqual(eventsOf('{"object":"error","message":"bad","type":"BadRequestError","code":"invalid_request"}', '{"error":"overloaded"}'), [
      { kind: 'server_error', message: 'bad', type: 'BadRequestError', code: 'invalid_request' },
      { kind: 'server_error', message: 'overloaded', type: null, code: null },
    ]);
  });

  it('choices other than index 0 are reported, not merged into the message', () => {
    const events = eventsOf('{"choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":"b"}}]}');
    assert.deepEqual(
      events.map((e) => e.kind),
      ['content', 'malformed'],
    );
  });

  it('[DONE] with stray whitespace is still done, and a multi-line data event is one chunk', () => {
    assert.deepEqual(runWhole('data:  [DONE] \n\n').events, [{ kind: 'done' }]);
    assert.deepEqual(runWhole('data: {"choices":\ndata: [{"delta":{"content":"a"}}]}\n\n').events, [{ kind: 'content', text: 'a' }]);
  });
});
