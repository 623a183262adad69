// The warning classes an answer that still counts as ok can carry (a record's `warnings`): one catalogue, read
// by the answer checks (agent/classify.ts), the summary (their meanings) and the workload's per-class
// thresholds (`thresholds.answer_warnings`). No runtime dependencies.

/** What can be wrong with an answer that still counts as ok, and what to check. */
export const WARNING_CLASSES = {
  tool_markup_in_content:
    "the answer's content carried raw tool-call markup (`<｜tool▁calls▁begin｜>`, `｜DSML｜`, `<tool_call>`, `<|tool_call|>`): the server's tool-call or reasoning parser is missing or does not match the model (SGLang: --tool-call-parser, --reasoning-parser)",
  tool_markup_in_arguments:
    "a tool call's arguments carried raw tool-call markup (`｜DSML｜`, `<｜tool▁call▁begin｜>`…): the server's tool-call parser let part of the model's markup through into the arguments (seen with DeepSeek V3.2/V4 DSML parsers); a harness would run the tool with them",
  wrapped_tool_arguments:
    'a tool call\'s arguments were wrapped in a spurious `{"arguments": …}` or `{"input": …}` key its tool does not declare (sglang#38924, DeepSeek V4 parser): a harness would call the tool with the wrong arguments',
  tool_call_without_name:
    "a tool call came without a function name (sglang#35563: DeepSeek V3.2/V4 streaming parsers drop names when the call's text arrives split): no tool can run it; the agent answers it with an error result, as a harness would",
  empty_answer:
    "the stream ended without a word: no content, no reasoning, no tool call (a stream of `choices: []` chunks only, or nothing but usage): a harness would get an empty turn and stall or loop; check the server's parsers and its logs for that request",
  no_finish_reason:
    'the stream ended without a `finish_reason` in any chunk: a server or proxy cut the stream short at a clean boundary, or does not follow the protocol; a harness cannot tell a finished answer from a cut one',
} as const;
export type WarningClass = keyof typeof WARNING_CLASSES;

/** The warning class names, in catalogue order. */
export const WARNING_CLASS_NAMES = Object.keys(WARNING_CLASSES) as WarningClass[];
