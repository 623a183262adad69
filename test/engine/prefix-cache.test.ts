// The prefix cache and tokenizer as pure functions: longest cached prefix, LRU bound, what a message's
// identity includes, and the one token-counting rule.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PrefixCache, extendChain, prefixChain } from '../../src/engine/prefix-cache.js';
import { messageTokens, textTokens } from '../../src/engine/tokens.js';
import type { ChatMessage } from '../../src/engine/protocol.js';

const msg = (role: string, content: string, extra: Partial<ChatMessage> = {}): ChatMessage => ({ role, content, toolCalls: [], toolCallId: null, ...extra });

describe('engine prefix cache', () => {
  it('counts ceil(chars/4) per message plus 4, tool-call names and arguments included, tools once', () => {
    assert.equal(textTokens(''), 0);
    assert.equal(textTokens('abcde'), 2);
    assert.equal(messageTokens(msg('user', 'abcd')), 5);
    assert.equal(messageTokens(msg('assistant', '', { toolCalls: [{ id: 'x', name: 'read', arguments: '{"a":1}' }] })), Math.ceil(11 / 4) + 4);
    const chain = prefixChain('[{"t":1}]', [msg('system', 'abcdefgh'), msg('user', 'hi')]);
    assert.deepEqual(
      chain.map((l) => l.tokens),
      [3, 3 + 6, 3 + 6 + 5],
    );
  });

  it('finds the longest cached prefix, and a conversation that diverges keeps only the shared part', () => {
    const cache = new PrefixCache();
    const a = prefixChain('', [msg('system', 'shared system prompt'), msg('user', 'task A')]);
    assert.equal(cache.lookup(a), 0);
    cache.insert(a);
    assert.equal(cache.lookup(a), a.at(-1)?.tokens);
    const b = prefixChain('', [msg('system', 'shared system prompt'), msg('user', 'task B')]);
    assert.equal(cache.lookup(b), b[1]?.tokens, 'only tools + system are shared');
    // The answer echoed back (trimmed, with a different tool-call id) is the same prefix.
    const answer = msg('assistant', 'done. ', { toolCalls: [{ id: 'call_1', name: 'f', arguments: '{}' }] });
    cache.insert(extendChain(a, answer));
    const echoed = prefixChain('', [
      msg('system', 'shared system prompt'),
      msg('user', 'task A'),
      msg('assistant', 'done.', { toolCalls: [{ id: 'other', name: 'f', arguments: '{}' }] }),
      msg('user', 'next'),
    ]);
    assert.equal(cache.lookup(echoed), echoed[3]?.tokens);
  });

  it('a tool result for another call id is another prefix', () => {
    const cache = new PrefixCache();
    cache.insert(prefixChain('', [msg('tool', 'out', { toolCallId: 'call_a' })]));
    const other = prefixChain('', [msg('tool', 'out', { toolCallId: 'call_b' })]);
    assert.equal(cache.lookup(other), other[0]?.tokens, 'only the (empty) tools link matches');
  });

  it('stays within its entry bound, evicting the least recently used', () => {
    const cache = new PrefixCache(10);
    const keep = prefixChain('', [msg('user', 'keep me')]);
    cache.insert(keep);
    for (let i = 0; i < 20; i += 1) {
      cache.insert(prefixChain('', [msg('user', `filler ${i}`)]));
      cache.lookup(keep);
    }
    assert.ok(cache.size <= 10);
    assert.equal(cache.lookup(keep), keep.at(-1)?.tokens, 'a prefix in use survives');
    assert.equal(cache.lookup(prefixChain('', [msg('user', 'filler 0')])), 0, 'an old one is gone');
  });
});
