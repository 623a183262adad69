// Chat request-body options whose string values are settings (an effort level, a mode, a number written as a
// string), never who sends the request: the one list of them. Every other string of `target.extra_body` is a
// secret until the workload names its key in `target.public_extra_body` (src/config/redact.ts), and a recorded
// trace keeps no other string of a request body (src/trace/shape.ts). No runtime dependencies.

/**
 * `any`: every value under the key is a setting. A list: the value is an object whose listed keys are settings
 * (any other key inside it is not). Chosen with care: only options whose values are enumerations, numbers or
 * flags in every API that takes them (OpenAI, SGLang, vLLM, OpenRouter); anything that carries free text or
 * says who asks (`user`, `metadata`, `stop`, `response_format`, `lora_path`, routing fields) is left out.
 */
export const PUBLIC_BODY_OPTIONS = {
  // Reasoning: OpenAI's effort and verbosity, a service tier, SGLang's separate_reasoning and stream_reasoning,
  // vLLM/OpenRouter's include_reasoning, OpenRouter's reasoning object, the Anthropic-style thinking object.
  reasoning_effort: 'any',
  verbosity: 'any',
  service_tier: 'any',
  thinking_mode: 'any',
  separate_reasoning: 'any',
  stream_reasoning: 'any',
  include_reasoning: 'any',
  reasoning: ['effort', 'max_tokens', 'exclude', 'enabled', 'summary'],
  thinking: ['type', 'budget_tokens'],
  // The chat template's switches: DeepSeek's thinking, Qwen3's enable_thinking, gpt-oss's reasoning_effort.
  chat_template_kwargs: ['thinking', 'enable_thinking', 'reasoning_effort'],
  // Sampling and length.
  top_k: 'any',
  top_p: 'any',
  min_p: 'any',
  repetition_penalty: 'any',
  frequency_penalty: 'any',
  presence_penalty: 'any',
  seed: 'any',
  min_tokens: 'any',
  ignore_eos: 'any',
  skip_special_tokens: 'any',
  spaces_between_special_tokens: 'any',
  no_stop_trim: 'any',
  logprobs: 'any',
  top_logprobs: 'any',
  parallel_tool_calls: 'any',
  add_generation_prompt: 'any',
  continue_final_message: 'any',
} as const satisfies Readonly<Record<string, 'any' | readonly string[]>>;

/** Whether the value at `path` of a request body (its keys from the top, array indexes included) is a known
 * setting of {@link PUBLIC_BODY_OPTIONS}. Own keys only: `constructor` or `toString` is no option. */
export function isBodySetting(path: readonly string[]): boolean {
  const [top, inner] = path;
  if (top === undefined || !Object.hasOwn(PUBLIC_BODY_OPTIONS, top)) return false;
  const rule: 'any' | readonly string[] = PUBLIC_BODY_OPTIONS[top as keyof typeof PUBLIC_BODY_OPTIONS];
  return rule === 'any' || (inner !== undefined && rule.includes(inner));
}
