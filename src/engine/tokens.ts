// The engine's one tokenizer: about 4 characters per token, plus a fixed per-message overhead for the chat
// template. Prompt counts, prefix-cache sizes and usage all come from here so they always agree.
import type { ChatMessage } from './protocol.js';

/** Template tokens around every message (role markers, separators). */
export const MESSAGE_OVERHEAD_TOKENS = 4;

/** Tokens of a piece of text: ceil(chars / 4). */
export function textTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Tokens of one message: content, tool-call names and arguments, and the template overhead. */
export function messageTokens(message: ChatMessage): number {
  let chars = message.content.length;
  for (const call of message.toolCalls) chars += call.name.length + call.arguments.length;
  return Math.ceil(chars / 4) + MESSAGE_OVERHEAD_TOKENS;
}

/** Tokens of the serialized tools array, counted once per prompt. */
export function toolsTokens(toolsJson: string): number {
  return textTokens(toolsJson);
}
