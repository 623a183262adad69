// Prefix cache model: a prompt is a chain of cumulative hashes (tools, then one per message); the cache is a
// bounded LRU of those hashes, so cached_tokens is the size of the longest prefix some earlier request left.
import { hashHex } from './hash.js';
import { messageTokens, toolsTokens } from './tokens.js';
import type { ChatMessage } from './protocol.js';

/** One link of a prompt's chain: the hash of everything up to here and its size in tokens. */
export interface PrefixLink {
  readonly hash: string;
  readonly tokens: number;
}

/** What identifies a message for caching. Content is trimmed because clients often trim streamed text,
 * and assistant tool-call ids are left out (clients may rewrite them); the tool result's call id stays. */
function messageKey(m: ChatMessage): string {
  const calls = m.toolCalls.map((c) => `${c.name}\u0001${c.arguments}`).join('\u0002');
  return `${m.role}\u0003${m.content.trim()}\u0003${calls}\u0003${m.toolCallId ?? ''}`;
}

/** Appends one message to a chain (used for the answer the client will echo back next round). */
export function extendChain(chain: readonly PrefixLink[], message: ChatMessage): PrefixLink[] {
  const last = chain[chain.length - 1];
  const link = { hash: hashHex(last?.hash ?? '', messageKey(message)), tokens: (last?.tokens ?? 0) + messageTokens(message) };
  return [...chain, link];
}

/** The chain of a prompt: the tools first (shared by every agent offering the same tools), then each message. */
export function prefixChain(toolsJson: string, messages: readonly ChatMessage[]): PrefixLink[] {
  let chain: PrefixLink[] = [{ hash: hashHex('tools', toolsJson), tokens: toolsTokens(toolsJson) }];
  for (const m of messages) chain = extendChain(chain, m);
  return chain;
}

/** Bounded LRU of prefix hashes → tokens (a Map keeps insertion order, so the first key is the oldest). */
export class PrefixCache {
  private readonly entries = new Map<string, number>();

  /** @param maxEntries prefixes kept before the least recently used are evicted */
  constructor(private readonly maxEntries = 20_000) {}

  get size(): number {
    return this.entries.size;
  }

  /** Tokens of the longest cached prefix of `chain` (0 when none); touches the hit so it stays. */
  lookup(chain: readonly PrefixLink[]): number {
    for (let i = chain.length - 1; i >= 0; i -= 1) {
      const link = chain[i];
      if (link === undefined || !this.entries.has(link.hash)) continue;
      // Touch the hit and its ancestors: a radix tree keeps a node's ancestors alive with it.
      for (let j = 0; j <= i; j += 1) this.touch(chain[j]);
      return link.tokens;
    }
    return 0;
  }

  /** Caches every prefix of `chain`. */
  insert(chain: readonly PrefixLink[]): void {
    for (const link of chain) this.touch(link);
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done === true) break;
      this.entries.delete(oldest.value);
    }
  }

  private touch(link: PrefixLink | undefined): void {
    if (link === undefined) return;
    this.entries.delete(link.hash);
    this.entries.set(link.hash, link.tokens);
  }
}
