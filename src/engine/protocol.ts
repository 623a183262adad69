// The OpenAI chat-completions request as the engine understands it: parsing and validating a raw body into a
// normalized, typed request (content as one string, tool calls flattened), or a BadRequest the server maps to 400.

/** A tool call as it appears in the conversation history (and in the answers we generate). */
export interface ToolCall {
  readonly id: string;
  readonly name: string;
  /** The JSON arguments, exactly as sent (a string, as in the OpenAI API). */
  readonly arguments: string;
}

/** One message, normalized: `content` is always a string ('' for null), tool calls flattened. */
export interface ChatMessage {
  readonly role: string;
  readonly content: string;
  readonly toolCalls: readonly ToolCall[];
  /** Set on `tool` messages: which call this result answers. */
  readonly toolCallId: string | null;
}

export interface ToolDef {
  readonly name: string;
  /** JSON schema of the arguments (`{}` when the request gave none). */
  readonly parameters: Readonly<Record<string, unknown>>;
}

export type ToolChoice = 'auto' | 'none' | 'required' | { readonly name: string };

export interface ChatRequest {
  /** The model field as sent (echoed back in responses), or null when absent. */
  readonly model: string | null;
  readonly messages: readonly ChatMessage[];
  readonly tools: readonly ToolDef[];
  /** The `tools` array serialized once, for token counting and prefix hashing ('' without tools). */
  readonly toolsJson: string;
  readonly toolChoice: ToolChoice;
  /** `max_tokens` (or `max_completion_tokens`); null means no cap beyond the engine's own. */
  readonly maxTokens: number | null;
  readonly stream: boolean;
  readonly includeUsage: boolean;
}

/** A request the engine refuses; `param` names the offending field as OpenAI errors do. */
export class BadRequest extends Error {
  readonly param: string | null;
  constructor(message: string, param: string | null = null) {
    super(message);
    this.name = 'BadRequest';
    this.param = param;
  }
}

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function contentText(value: unknown, where: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  // Content parts: only text parts carry tokens we count; other parts (images) are ignored.
  if (Array.isArray(value)) {
    return value
      .map((part) => (isObject(part) && typeof part['text'] === 'string' ? part['text'] : ''))
      .join('');
  }
  throw new BadRequest(`${where} must be a string, null or an array of content parts`, where);
}

function parseToolCalls(value: unknown, where: string): ToolCall[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new BadRequest(`${where} must be an array`, where);
  return value.map((call, i) => {
    const fn = isObject(call) ? call['function'] : undefined;
    if (!isObject(call) || !isObject(fn) || typeof fn['name'] !== 'string') {
      throw new BadRequest(`${where}[${i}] must be {id, type: "function", function: {name, arguments}}`, `${where}[${i}]`);
    }
    const args = fn['arguments'];
    return {
      id: typeof call['id'] === 'string' ? call['id'] : '',
      name: fn['name'],
      arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}),
    };
  });
}

function parseMessage(value: unknown, i: number): ChatMessage {
  const where = `messages[${i}]`;
  if (!isObject(value)) throw new BadRequest(`${where} must be an object`, where);
  const role = value['role'];
  if (typeof role !== 'string' || !ROLES.has(role)) {
    throw new BadRequest(`${where}.role must be one of ${[...ROLES].join(', ')}`, `${where}.role`);
  }
  const toolCallId = value['tool_call_id'];
  return {
    role,
    content: contentText(value['content'], `${where}.content`),
    toolCalls: parseToolCalls(value['tool_calls'], `${where}.tool_calls`),
    toolCallId: typeof toolCallId === 'string' ? toolCallId : null,
  };
}

function parseTools(value: unknown): ToolDef[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new BadRequest('tools must be an array', 'tools');
  return value.map((tool, i) => {
    const fn = isObject(tool) ? tool['function'] : undefined;
    if (!isObject(fn) || typeof fn['name'] !== 'string') {
      throw new BadRequest(`tools[${i}] must be {type: "function", function: {name, parameters}}`, `tools[${i}]`);
    }
    const parameters = fn['parameters'];
    return { name: fn['name'], parameters: isObject(parameters) ? parameters : {} };
  });
}

function parseToolChoice(value: unknown, tools: readonly ToolDef[]): ToolChoice {
  if (value === undefined || value === null) return 'auto';
  if (value === 'auto' || value === 'none' || value === 'required') return value;
  if (isObject(value) && isObject(value['function']) && typeof value['function']['name'] === 'string') {
    const name = value['function']['name'];
    if (!tools.some((t) => t.name === name)) throw new BadRequest(`tool_choice names "${name}", which is not in tools`, 'tool_choice');
    return { name };
  }
  throw new BadRequest('tool_choice must be "auto", "none", "required" or {type: "function", function: {name}}', 'tool_choice');
}

function parseMaxTokens(body: Json): number | null {
  const key = body['max_tokens'] !== undefined && body['max_tokens'] !== null ? 'max_tokens' : 'max_completion_tokens';
  const value = body[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) throw new BadRequest(`${key} must be an integer ≥ 1`, key);
  return value;
}

/** Parses a raw request body; throws BadRequest on malformed JSON or a request we cannot answer. */
export function parseChatRequest(raw: string): ChatRequest {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch (err) {
    throw new BadRequest(`request body is not valid JSON: ${(err as Error).message}`);
  }
  if (!isObject(body)) throw new BadRequest('request body must be a JSON object');
  const messages = body['messages'];
  if (!Array.isArray(messages) || messages.length === 0) throw new BadRequest('messages must be a non-empty array', 'messages');
  const tools = parseTools(body['tools']);
  const streamOptions = body['stream_options'];
  const model = body['model'];
  return {
    model: typeof model === 'string' && model.length > 0 ? model : null,
    messages: messages.map(parseMessage),
    tools,
    toolsJson: tools.length > 0 ? JSON.stringify(body['tools']) : '',
    toolChoice: parseToolChoice(body['tool_choice'], tools),
    maxTokens: parseMaxTokens(body),
    stream: body['stream'] === true,
    includeUsage: isObject(streamOptions) && streamOptions['include_usage'] === true,
  };
}
