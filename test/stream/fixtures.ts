// SGLang-shaped /v1/chat/completions SSE bodies, written out as the server sends them (chunk fields,
// `usage: null` on every chunk, `matched_stop`, a usage-only last chunk, `data: [DONE]`).

/** Fields every SGLang chunk starts with. */
const H = '{"id":"9f4c1e2a7b3d4c5e8f60a1b2c3d4e5f6","object":"chat.completion.chunk","created":1733151234,"model":"deepseek-ai/DeepSeek-V3"';

export interface Fixture {
  name: string;
  body: string;
}

/** A plain answer: role on the first chunk, three content pieces, finish, usage with cached tokens, [DONE]. */
export const contentAnswer: Fixture = {
  name: 'a content answer',
  body:
    `data: ${H},"choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}\n\n` +
    `data: ${H},"choices":[{"index":0,"delta":{"role":null,"content":"Hello","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}\n\n` +
    `data: ${H},"choices":[{"index":0,"delta":{"role":null,"content":", world","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}\n\n` +
    `data: ${H},"choices":[{"index":0,"delta":{"role":null,"content":"!","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}\n\n` +
    `data: ${H},"choices":[{"index":0,"delta":{"role":null,"content":null,"reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":"stop","matched_stop":1}],"usage":null}\n\n` +
    `data: ${H},"choices":[],"usage":{"prompt_tokens":412,"total_tokens":416,"completion_tokens":4,"prompt_tokens_details":{"cached_tokens":384}}}\n\n` +
    'data: [DONE]\n\n',
};

/** A reasoning parser is on: reasoning_content first, then content; usage without prompt_tokens_details. */
export const reasoningThenContent: Fixture = {
  name: 'reasoning then content',
  body:
    `data: ${H},"choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}\n\n` +
    `data: ${H},"choices":[{"index":0,"delta":{"role":null,"content":null,"reasoning_content":"The user wants","tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}\n\n` +
    `data: ${H},"choices":[{"index":0,"delta":{"role":null,"content":null,"reasoning_content":" a number.","tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}\n\n` +
    `data: ${H},"choices":[{"index":0,"delta":{"role":null,"content":"42","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}\n\n` +
    `data: ${H},"choices":[{"index":0,"delta":{"role":null,"content":null,"reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":"stop","matched_stop":1}],"usage":null}\n\n` +
    `data: ${H},"choices":[],"usage":{"prompt_tokens":57,"total_tokens":61,"completion_tokens":4,"prompt_tokens_details":null}}\n\n` +
    'data: [DONE]\n\n',
};

/** One tool call: id and name on the first fragment, arguments in pieces, one fragment without `index`. */
export const singleToolCall: Fixture = {
  name: 'a single fragmented tool call',
  body:
    `data: ${H},"choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}\n\n` +
    `data: ${H},"choices":[{"index":0,"delta":{"role":null,"content":null,"reasoning_content":null,"tool_calls":[{"id":"call_a1b2c3","index":0,"type":"function","function":{"name":"read_file","arguments":""}}]},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}\n\n` +
    `data: ${H},"choices":[{"index":0,"delta":{"role":null,"content":null,"reasoning_content":null,"tool_calls":[{"id":null,"index":0,"type":"function","function":{"name":null,"arguments":"{\\"path\\": "}}]},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}\n\n` +
    `data: ${H},"choices":[{"index":0,"delta":{"role":null,"content":null,"reasoning_content":null,"tool_calls":[{"function":{"arguments":"\\"src/main.ts\\""}}]},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}\n\n` +
    `data: ${H},"choices":[{"index":0,"delta":{"role":null,"content":null,"reasoning_content":null,"tool_calls":[{"id":null,"index":0,"type":"function","function":{"name":null,"arguments":"}"}}]},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}\n\n` +
    `data: ${H},"choices":[{"index":0,"delta":{"role":null,"content":null,"reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":"tool_calls","matched_stop":null}],"usage":null}\n\n` +
    `data: ${H},"choices":[],"usage":{"prompt_tokens":1200,"total_tokens":1221,"completion_tokens":21}}\n\n` +
    'data: [DONE]\n\n',
};

/** Two tool calls whose fragments interleave by index, one chunk carrying fragments of both. */
export const twoToolCalls: Fixture = {
  name: 'two interleaved tool calls',
  body:
    `data: ${H},"choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}\n\n` +
    `data: ${H},"choices":[{"index":0,"delta":{"role":null,"content":null,"reasoning_content":null,"tool_calls":[{"id":"call_0","index":0,"type":"function","function":{"name":"grep","arguments":"{\\"pattern\\":"}}]},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}\n\n` +
    `data: ${H},"choices":[{"index":0,"delta":{"role":null,"content":null,"reasoning_content":null,"tool_calls":[{"id":"call_1","index":1,"type":"function","function":{"name":"list_dir","arguments":""}}]},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}\n\n` +
    `data: ${H},"choices":[{"index":0,"delta":{"role":null,"content":null,"reasoning_content":null,"tool_calls":[{"id":null,"index":1,"type":"function","function":{"name":null,"arguments":"{\\"dir\\":"}}]},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}\n\n` +
    `data: ${H},"choices":[{"index":0,"delta":{"role":null,"content":null,"reasoning_content":null,"tool_calls":[{"id":null,"index":0,"type":"function","function":{"name":null,"arguments":"\\"TODO\\"}"}},{"id":null,"index":1,"type":"function","function":{"name":null,"arguments":"\\"src\\""}}]},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}\n\n` +
    `data: ${H},"choices":[{"index":0,"delta":{"role":null,"content":null,"reasoning_content":null,"tool_calls":[{"id":null,"index":1,"type":"function","function":{"name":null,"arguments":"}"}}]},"logprobs":null,"finish_reason":"tool_calls","matched_stop":null}],"usage":null}\n\n` +
    'data: [DONE]\n\n',
};

/** SGLang reports a failure after streaming began: `data: {"error": ...}` on an HTTP 200, then [DONE]. */
export const midStreamError: Fixture = {
  name: 'a mid-stream server error',
  body:
    `data: ${H},"choices":[{"index":0,"delta":{"role":"assistant","content":"Partial","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}\n\n` +
    'data: {"error":{"object":"error","message":"KV transfer failed for request 9f4c1e2a","type":"InternalServerError","param":null,"code":500}}\n\n' +
    'data: [DONE]\n\n',
};

/** A cut JSON chunk, then the stream carries on. */
export const invalidJsonThenValid: Fixture = {
  name: 'an invalid JSON line then valid ones',
  body:
    `data: ${H},"choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}\n\n` +
    `data: ${H},"choices":[{"index":0,"delta":{"role":null,"content":"lost\n\n` +
    `data: ${H},"choices":[{"index":0,"delta":{"role":null,"content":"kept","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}\n\n` +
    `data: ${H},"choices":[{"index":0,"delta":{"role":null,"content":null,"reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":"stop","matched_stop":1}],"usage":null}\n\n` +
    'data: [DONE]\n\n',
};

/** The content answer as a proxy on Windows-style line ends would relay it. */
export const crlfAnswer: Fixture = {
  name: 'a content answer with CRLF line ends',
  body: contentAnswer.body.replaceAll('\n', '\r\n'),
};

/** Keep-alive comments between events, an engine timing comment, and an ignored non-message event. */
export const withComments: Fixture = {
  name: 'an answer with comments and a foreign event type',
  body:
    ': ping\n\n' +
    `data: ${H},"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}\n\n` +
    ': engine-first-token-ms=12\n' +
    ':ping\n\n' +
    'event: metrics\ndata: {"queue_ms":3}\n\n' +
    `data: ${H},"choices":[{"index":0,"delta":{"role":null,"content":" there","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":"stop","matched_stop":1}],"usage":null}\n\n` +
    'data: [DONE]\n\n',
};

/** Two- to four-byte UTF-8 characters; the last chunk carries content, finish_reason and usage at once. */
export const multiByte: Fixture = {
  name: 'multi-byte UTF-8 content and arguments',
  body:
    `data: ${H},"choices":[{"index":0,"delta":{"role":"assistant","content":"héllo 👋","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}\n\n` +
    `data: ${H},"choices":[{"index":0,"delta":{"role":null,"content":" 世界 🧑‍💻","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}\n\n` +
    `data: ${H},"choices":[{"index":0,"delta":{"role":null,"content":" ✓","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":"stop","matched_stop":1}],"usage":{"prompt_tokens":9,"total_tokens":16,"completion_tokens":7,"prompt_tokens_details":{"cached_tokens":null}}}\n\n` +
    'data: [DONE]\n\n',
};

/** The body stops after [DONE] with one newline, not the blank line that ends an SSE event. */
export const unterminatedLastEvent: Fixture = {
  name: 'a body whose last event lacks its blank line',
  body:
    `data: ${H},"choices":[{"index":0,"delta":{"role":"assistant","content":"ok","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":"stop","matched_stop":1}],"usage":null}\n\n` +
    'data: [DONE]\n',
};

export const ALL_FIXTURES: readonly Fixture[] = [
  contentAnswer,
  reasoningThenContent,
  singleToolCall,
  twoToolCalls,
  midStreamError,
  invalidJsonThenValid,
  crlfAnswer,
  withComments,
  multiByte,
  unterminatedLastEvent,
];
