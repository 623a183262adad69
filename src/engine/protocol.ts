// The chat-completions request as SGLang reads it: the request model's type checks (pydantic, lax: "0.5" is a
// number, 5.0 an integer) reported in pydantic's words with type `Bad Request`, then SGLang's own checks
// (`Messages cannot be empty.`, tool choice without tools, bad tool schemas, history arguments that are not
// JSON…) with type `BadRequestError`. Both are 400s with SGLang's flat error body; the server answers them.
import { isObject } from '../util/index.js';

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

/** Where a PD router told the workers to meet (`bootstrap_host`, `bootstrap_port`, `bootstrap_room`). */
export interface Bootstrap {
  readonly host: string;
  readonly port: number | null;
  readonly room: number;
}

export interface ChatRequest {
  /** The model field as sent (echoed back in responses), or null when absent. */
  readonly model: string | null;
  readonly messages: readonly ChatMessage[];
  readonly tools: readonly ToolDef[];
  /** The `tools` array serialized once, for token counting and prefix hashing ('' without tools). */
  readonly toolsJson: string;
  readonly toolChoice: ToolChoice;
  /** `max_completion_tokens` or `max_tokens`; null means no cap beyond the context. */
  readonly maxTokens: number | null;
  readonly stream: boolean;
  readonly includeUsage: boolean;
  /** Choices to sample (`n`). */
  readonly n: number;
  /** `chat_template_kwargs.thinking` as sent, or null. */
  readonly thinking: boolean | null;
  readonly bootstrap: Bootstrap | null;
  /** The request id the client gave in `rid` (SGLang's field), when it is a plain printable id; else null. */
  readonly rid: string | null;
}

/** A request SGLang refuses with 400: `type` is `Bad Request` (request-model validation) or `BadRequestError`. */
export class BadRequest extends Error {
  readonly type: string;
  constructor(message: string, type: 'Bad Request' | 'BadRequestError' = 'BadRequestError') {
    super(message);
    this.name = 'BadRequest';
    this.type = type;
  }
}

type Json = Record<string, unknown>;
type Loc = readonly (string | number)[];

interface FieldError {
  readonly type: string;
  readonly loc: Loc;
  readonly msg: string;
  readonly input: unknown;
  readonly ctx?: Json;
}

const REPR_MAX_CHARS = 200;

/** A value as Python's repr() prints it (what pydantic puts in `input`), cut at 200 characters. */
export function pyRepr(value: unknown): string {
  const out = reprOf(value, 0);
  return out.length > REPR_MAX_CHARS ? `${out.slice(0, REPR_MAX_CHARS)}...` : out;
}

function reprOf(value: unknown, depth: number): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : String(value);
  if (typeof value === 'string') return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;
  if (value instanceof Uint8Array) return `b'${Buffer.from(value).toString('latin1').slice(0, REPR_MAX_CHARS).replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;
  if (depth > 4) return '...';
  if (Array.isArray(value)) return `[${value.map((v) => reprOf(v, depth + 1)).join(', ')}]`;
  if (typeof value === 'object')
    return `{${Object.entries(value)
      .map(([k, v]) => `'${k}': ${reprOf(v, depth + 1)}`)
      .join(', ')}}`;
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- only scalars are left here (objects returned above)
  return String(value);
}

/** FastAPI's RequestValidationError text: a Python list of pydantic error dicts. */
function validationMessage(errors: readonly FieldError[]): string {
  const items = errors.map((e) => {
    const loc = `(${e.loc.map((p) => (typeof p === 'number' ? String(p) : `'${p}'`)).join(', ')}${e.loc.length === 1 ? ',' : ''})`;
    const ctx = e.ctx === undefined ? '' : `, 'ctx': ${reprOf(e.ctx, 0)}`;
    return `{'type': '${e.type}', 'loc': ${loc}, 'msg': ${reprOf(e.msg, 0)}, 'input': ${pyRepr(e.input)}${ctx}}`;
  });
  return `[${items.join(', ')}]`;
}

/** Collects pydantic-style errors over one request body. */
class Checker {
  readonly errors: FieldError[] = [];

  add(type: string, loc: Loc, msg: string, input: unknown, ctx?: Json): void {
    this.errors.push(ctx === undefined ? { type, loc, msg, input } : { type, loc, msg, input, ctx });
  }

  /** Lax float: numbers and numeric strings. */
  float(body: Json, key: string): void {
    const v = body[key];
    if (v === undefined || v === null || (typeof v === 'number' && Number.isFinite(v))) return;
    if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return;
    if (typeof v === 'string') this.add('float_parsing', ['body', key], 'Input should be a valid number, unable to parse string as a number', v);
    else this.add('float_type', ['body', key], 'Input should be a valid number', v);
  }

  /** Lax int: integers, integral floats, integer strings. */
  int(body: Json, key: string, loc: Loc = ['body', key]): void {
    const v = body[key];
    if (v === undefined || v === null || (typeof v === 'number' && Number.isInteger(v))) return;
    if (typeof v === 'number') this.add('int_from_float', loc, 'Input should be a valid integer, got a number with a fractional part', v);
    else if (typeof v === 'string' && /^\s*[-+]?\d+\s*$/.test(v)) return;
    else if (typeof v === 'string') this.add('int_parsing', loc, 'Input should be a valid integer, unable to parse string as an integer', v);
    else this.add('int_type', loc, 'Input should be a valid integer', v);
  }

  /** Lax bool: booleans, 0/1, and the strings pydantic accepts. */
  bool(body: Json, key: string, loc: Loc = ['body', key]): void {
    const v = body[key];
    if (v === undefined || v === null || typeof v === 'boolean' || v === 0 || v === 1) return;
    if (typeof v === 'string' && /^(true|false|yes|no|on|off|t|f|y|n|1|0)$/i.test(v)) return;
    this.add(typeof v === 'string' ? 'bool_parsing' : 'bool_type', loc, typeof v === 'string' ? 'Input should be a valid boolean, unable to interpret input' : 'Input should be a valid boolean', v);
  }

  string(body: Json, key: string, loc: Loc = ['body', key]): void {
    const v = body[key];
    if (v !== undefined && v !== null && typeof v !== 'string') this.add('string_type', loc, 'Input should be a valid string', v);
  }

  dict(body: Json, key: string, loc: Loc = ['body', key]): void {
    const v = body[key];
    if (v !== undefined && v !== null && !isObject(v)) this.add('dict_type', loc, 'Input should be a valid dictionary', v);
  }
}

function asBool(value: unknown): boolean {
  if (typeof value === 'string') return /^(true|yes|on|t|y|1)$/i.test(value);
  return value === true || value === 1;
}

function asNumber(value: unknown): number | null {
  if (value === undefined || value === null) return null;
  return typeof value === 'number' ? value : Number(value);
}

const ROLES = ['system', 'developer', 'user', 'assistant', 'tool', 'function'] as const;

function contentText(value: unknown): string {
  if (typeof value === 'string') return value;
  // Content parts: only text parts carry tokens we count; other parts (images) are ignored.
  if (Array.isArray(value)) return value.map((part) => (isObject(part) && typeof part['text'] === 'string' ? part['text'] : '')).join('');
  return '';
}

function checkMessage(c: Checker, value: unknown, i: number): void {
  const at: Loc = ['body', 'messages', i];
  if (!isObject(value)) {
    c.add('model_attributes_type', at, 'Input should be a valid dictionary or object to extract fields from', value);
    return;
  }
  const role = value['role'];
  if (typeof role !== 'string' || !(ROLES as readonly string[]).includes(role)) {
    c.add(
      'literal_error',
      [...at, 'role'],
      `Input should be ${ROLES.map((r) => `'${r}'`)
        .join(', ')
        .replace(/, ([^,]*)$/, ' or $1')}`,
      role ?? null,
      { expected: ROLES.map((r) => `'${r}'`).join(', ') },
    );
    return;
  }
  const content = value['content'];
  if (content !== undefined && content !== null && typeof content !== 'string' && !Array.isArray(content)) {
    c.add('string_type', [...at, 'content', 'str'], 'Input should be a valid string', content);
  }
  if (role === 'user' && (content === undefined || content === null)) c.add('missing', [...at, 'content'], 'Field required', value);
  c.string(value, 'tool_call_id', [...at, 'tool_call_id']);
  const calls = value['tool_calls'];
  if (calls === undefined || calls === null) return;
  if (!Array.isArray(calls)) {
    c.add('list_type', [...at, 'tool_calls'], 'Input should be a valid list', calls);
    return;
  }
  calls.forEach((call, j) => {
    const cat: Loc = [...at, 'tool_calls', j];
    if (!isObject(call)) return c.add('model_attributes_type', cat, 'Input should be a valid dictionary or object to extract fields from', call);
    const fn = call['function'];
    if (!isObject(fn))
      return c.add(
        fn === undefined ? 'missing' : 'model_attributes_type',
        [...cat, 'function'],
        fn === undefined ? 'Field required' : 'Input should be a valid dictionary or object to extract fields from',
        fn ?? call,
      );
    c.string(fn, 'name', [...cat, 'function', 'name']);
    const args = fn['arguments'];
    if (args !== undefined && args !== null && typeof args !== 'string' && !isObject(args)) c.add('string_type', [...cat, 'function', 'arguments', 'str'], 'Input should be a valid string', args);
  });
}

function checkTools(c: Checker, value: unknown): void {
  if (value === undefined || value === null) return;
  if (!Array.isArray(value)) {
    c.add('list_type', ['body', 'tools'], 'Input should be a valid list', value);
    return;
  }
  value.forEach((tool, i) => {
    const at: Loc = ['body', 'tools', i];
    if (!isObject(tool)) return c.add('model_attributes_type', at, 'Input should be a valid dictionary or object to extract fields from', tool);
    const type = tool['type'];
    if (type !== undefined && type !== 'function') c.add('literal_error', [...at, 'type'], "Input should be 'function'", type, { expected: "'function'" });
    const fn = tool['function'];
    if (!isObject(fn))
      return c.add(
        fn === undefined ? 'missing' : 'model_attributes_type',
        [...at, 'function'],
        fn === undefined ? 'Field required' : 'Input should be a valid dictionary or object to extract fields from',
        fn ?? tool,
      );
    if (fn['name'] === undefined) c.add('missing', [...at, 'function', 'name'], 'Field required', fn);
    else c.string(fn, 'name', [...at, 'function', 'name']);
    c.string(fn, 'description', [...at, 'function', 'description']);
    c.dict(fn, 'parameters', [...at, 'function', 'parameters']);
  });
}

function checkToolChoice(c: Checker, value: unknown): void {
  if (value === undefined || value === null || value === 'auto' || value === 'none' || value === 'required') return;
  if (isObject(value) && isObject(value['function']) && typeof value['function']['name'] === 'string') return;
  c.add('union_tag_invalid', ['body', 'tool_choice'], "Input should be 'auto', 'required', 'none' or a valid dictionary naming a function", value);
}

const JSON_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);

/** The parts of Draft 2020-12's metaschema a client gets wrong in practice: `type`, `properties`, `required`,
 * `enum`, `items`. Returns jsonschema's error sentence, or null. */
function schemaProblem(schema: unknown, depth = 0): string | null {
  if (typeof schema === 'boolean') return null;
  if (!isObject(schema)) return `${pyRepr(schema)} is not of type 'object', 'boolean'`;
  if (depth > 16) return null;
  const type = schema['type'];
  if (type !== undefined) {
    const types = Array.isArray(type) ? type : [type];
    for (const t of types) if (typeof t !== 'string' || !JSON_TYPES.has(t)) return `${pyRepr(type)} is not valid under any of the given schemas`;
  }
  const required = schema['required'];
  if (required !== undefined && (!Array.isArray(required) || required.some((r) => typeof r !== 'string'))) return `${pyRepr(required)} is not of type 'array'`;
  const options = schema['enum'];
  if (options !== undefined && !Array.isArray(options)) return `${pyRepr(options)} is not of type 'array'`;
  const props = schema['properties'];
  if (props !== undefined) {
    if (!isObject(props)) return `${pyRepr(props)} is not of type 'object'`;
    for (const sub of Object.values(props)) {
      const problem = schemaProblem(sub, depth + 1);
      if (problem !== null) return problem;
    }
  }
  const items = schema['items'];
  return items === undefined ? null : schemaProblem(items, depth + 1);
}

/** orjson's wording for a JSON syntax error, from JSON.parse's (Node 20 gives a position or "end of input"). */
function orjsonMessage(text: string, error: unknown): string {
  const detail = error instanceof Error ? error.message : String(error);
  const at = /position (\d+)/.exec(detail);
  const pos = at === null ? text.length : Number(at[1]);
  const line = text.slice(0, pos).split('\n').length;
  const col = pos - text.lastIndexOf('\n', pos - 1);
  const what = at === null || /unterminated|end of/i.test(detail) ? 'unexpected end of data' : 'unexpected character';
  return `${what}: line ${line} column ${col} (char ${pos})`;
}

function toolCallsOf(value: unknown): ToolCall[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isObject).map((call) => {
    const fn = isObject(call['function']) ? call['function'] : {};
    const args = fn['arguments'];
    const text = typeof args === 'string' ? args : JSON.stringify(args ?? {});
    // SGLang parses history arguments for the chat template (orjson.loads): text that is not JSON is a 400.
    if (typeof args === 'string') {
      try {
        JSON.parse(args);
      } catch (error) {
        throw new BadRequest(orjsonMessage(args, error));
      }
    }
    return { id: typeof call['id'] === 'string' ? call['id'] : '', name: typeof fn['name'] === 'string' ? fn['name'] : '', arguments: text };
  });
}

function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType === undefined || contentType.trim() === '') return true;
  const type = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

export interface ParseOptions {
  /** The request's Content-Type: FastAPI reads a body as JSON only when it says JSON (or says nothing). */
  readonly contentType?: string | undefined;
  /** The server's context length, for the `max_completion_tokens` check. @default 1048576 */
  readonly contextLength?: number;
}

/**
 * Parses and validates a raw request body as SGLang's `/v1/chat/completions` does.
 * @throws BadRequest for every 400 SGLang gives before it counts tokens
 */
export function parseChatRequest(raw: string, options: ParseOptions = {}): ChatRequest {
  const contentType = options.contentType;
  const contextLength = options.contextLength ?? 1_048_576;
  if (!isJsonContentType(contentType)) {
    throw new BadRequest(
      validationMessage([{ type: 'model_attributes_type', loc: ['body'], msg: 'Input should be a valid dictionary or object to extract fields from', input: Buffer.from(raw) }]),
      'Bad Request',
    );
  }
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch (error) {
    const at = /position (\d+)/.exec(error instanceof Error ? error.message : '');
    const pos = at === null ? raw.length : Number(at[1]);
    throw new BadRequest(validationMessage([{ type: 'json_invalid', loc: ['body', pos], msg: 'JSON decode error', input: {}, ctx: { error: 'Expecting value' } }]), 'Bad Request');
  }
  const c = new Checker();
  if (!isObject(body)) {
    c.add('model_attributes_type', ['body'], 'Input should be a valid dictionary or object to extract fields from', body);
    throw new BadRequest(validationMessage(c.errors), 'Bad Request');
  }
  const messages = body['messages'];
  if (messages === undefined) c.add('missing', ['body', 'messages'], 'Field required', body);
  else if (!Array.isArray(messages)) c.add('list_type', ['body', 'messages'], 'Input should be a valid list', messages);
  else messages.forEach((m, i) => checkMessage(c, m, i));
  c.string(body, 'model');
  for (const key of ['temperature', 'top_p', 'min_p', 'frequency_penalty', 'presence_penalty', 'repetition_penalty']) c.float(body, key);
  for (const key of ['max_tokens', 'max_completion_tokens', 'n', 'top_k', 'seed', 'bootstrap_port', 'bootstrap_room']) c.int(body, key);
  for (const key of ['stream', 'separate_reasoning', 'stream_reasoning', 'logprobs', 'skip_special_tokens']) c.bool(body, key);
  c.string(body, 'bootstrap_host');
  c.dict(body, 'chat_template_kwargs');
  const streamOptions = body['stream_options'];
  if (streamOptions !== undefined && streamOptions !== null) {
    if (!isObject(streamOptions)) c.add('model_attributes_type', ['body', 'stream_options'], 'Input should be a valid dictionary or object to extract fields from', streamOptions);
    else c.bool(streamOptions, 'include_usage', ['body', 'stream_options', 'include_usage']);
  }
  checkTools(c, body['tools']);
  checkToolChoice(c, body['tool_choice']);
  if (c.errors.length > 0) throw new BadRequest(validationMessage(c.errors), 'Bad Request');

  // The request model is valid: SGLang's own checks, in its order.
  const list = messages as unknown[];
  if (list.length === 0) throw new BadRequest('Messages cannot be empty.');
  const rawTools = Array.isArray(body['tools']) ? (body['tools'] as Json[]) : [];
  const tools: ToolDef[] = rawTools.map((t) => {
    const fn = t['function'] as Json;
    return { name: String(fn['name']), parameters: isObject(fn['parameters']) ? fn['parameters'] : {} };
  });
  const choice = body['tool_choice'];
  let toolChoice: ToolChoice =
    choice === undefined || choice === null
      ? tools.length === 0
        ? 'none'
        : 'auto'
      : typeof choice === 'string'
        ? (choice as ToolChoice)
        : { name: String(((choice as Json)['function'] as Json)['name']) };
  if (toolChoice === 'required' && tools.length === 0) throw new BadRequest('Tools cannot be empty if tool choice is set to required.');
  if (typeof toolChoice === 'object') {
    if (tools.length === 0) throw new BadRequest('Tools cannot be empty if tool choice is set to a specific tool.');
    const name = toolChoice.name;
    if (!tools.some((t) => t.name === name)) throw new BadRequest(`Tool '${name}' not found in tools list.`);
  }
  rawTools.forEach((t, i) => {
    const params = (t['function'] as Json)['parameters'];
    if (params === undefined || params === null) return;
    const problem = schemaProblem(params);
    if (problem !== null) throw new BadRequest(`Tool ${i} function has invalid 'parameters' schema: ${problem}`);
  });
  if (tools.length === 0 && toolChoice !== 'none') toolChoice = 'none';
  const maxTokens = asNumber(body['max_completion_tokens'] ?? body['max_tokens']);
  if (maxTokens !== null && maxTokens > contextLength) {
    throw new BadRequest(`max_completion_tokens is too large: ${maxTokens}.This model supports at most ${contextLength} completion tokens.`);
  }
  const parsed = list.map((m): ChatMessage => {
    const msg = m as Json;
    const toolCallId = msg['tool_call_id'];
    return { role: String(msg['role']), content: contentText(msg['content']), toolCalls: toolCallsOf(msg['tool_calls']), toolCallId: typeof toolCallId === 'string' ? toolCallId : null };
  });
  const temperature = asNumber(body['temperature']);
  if (temperature !== null && temperature < 0) throw new BadRequest(`temperature must be non-negative, got ${pyFloat(temperature)}.`);
  const topP = asNumber(body['top_p']);
  if (topP !== null && (topP <= 0 || topP > 1)) throw new BadRequest(`top_p must be in (0, 1], got ${pyFloat(topP)}.`);
  if (maxTokens !== null && maxTokens < 0) throw new BadRequest(`max_new_tokens must be at least 0, got ${maxTokens}.`);
  const n = asNumber(body['n']) ?? 1;
  if (n < 1) throw new BadRequest(`n must be at least 1, got ${n}.`);
  const model = body['model'];
  const kwargs = isObject(body['chat_template_kwargs']) ? body['chat_template_kwargs'] : {};
  const thinking = kwargs['thinking'] ?? kwargs['enable_thinking'];
  const host = body['bootstrap_host'];
  const room = asNumber(body['bootstrap_room']);
  return {
    model: typeof model === 'string' && model.length > 0 ? model : null,
    messages: parsed,
    tools,
    toolsJson: tools.length > 0 ? JSON.stringify(body['tools']) : '',
    toolChoice,
    maxTokens,
    stream: asBool(body['stream']),
    includeUsage: isObject(streamOptions) && asBool(streamOptions['include_usage']),
    n,
    thinking: thinking === undefined || thinking === null ? null : asBool(thinking),
    bootstrap: typeof host === 'string' && room !== null ? { host, port: asNumber(body['bootstrap_port']), room } : null,
    rid: clientRequestId(body['rid']),
  };
}

/** Printable ASCII without quotes or backslashes, up to 128 characters: an id the log line can quote as is. */
const CLIENT_ID = /^[\x21-\x7e]{1,128}$/;

/** A client's request id (body `rid`, or the `X-Request-Id` header) when it can be logged safely; else null. */
export function clientRequestId(value: unknown): string | null {
  if (typeof value !== 'string' || !CLIENT_ID.test(value) || /['"\\]/.test(value)) return null;
  return value;
}

function pyFloat(n: number): string {
  return Number.isInteger(n) ? `${n}.0` : String(n);
}

/**
 * SGLang's context checks, made once the prompt is tokenized: a prompt of `context_length` tokens or more, or
 * one whose `max_tokens` would run past the context.
 * @throws BadRequest with SGLang's sentence
 */
export function checkContext(promptTokens: number, maxTokens: number | null, contextLength: number): void {
  if (promptTokens >= contextLength) throw new BadRequest(`The input (${promptTokens} tokens) is longer than the model's context length (${contextLength} tokens).`);
  if (maxTokens !== null && maxTokens + promptTokens >= contextLength) {
    throw new BadRequest(
      `Requested token count exceeds the model's maximum context length of ${contextLength} tokens. You requested a total of ${maxTokens + promptTokens} tokens: ${promptTokens} tokens from the input messages and ${maxTokens} tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.`,
    );
  }
}
