import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseWorkload, redactWorkload } from '../../src/config/index.js';

describe('redactWorkload', () => {
  it('keeps env var name fields and numbers, masks secret-looking strings, and leaves the input untouched', () => {
    const w = parseWorkload('target:\n  api_key_env: LLM_API_KEY\nlabels:\n  arm: a\n  api_key: sk-live-123\n  ci_token: abc\n  db_password: hunter2\n  my_secret: s\n', 'r.yaml');
    const copy = redactWorkload(w) as typeof w;
    assert.equal(copy.target.api_key_env, 'LLM_API_KEY');
    assert.deepEqual(copy.labels, { arm: 'a', api_key: '[redacted]', ci_token: '[redacted]', db_password: '[redacted]', my_secret: '[redacted]' });
    // `*_tokens` fields are numbers (sizes), not secrets.
    assert.equal(copy.conversation.max_tokens, 256);
    assert.equal(w.labels['api_key'], 'sk-live-123');
    assert.notEqual(copy, w);
    assert.equal(Object.isFrozen(copy), false);
  });

  it('a workload with nothing secret comes back deep-equal', () => {
    const w = parseWorkload('conversation:\n  tools:\n    - name: read_file\n', 'r.yaml');
    assert.deepEqual(redactWorkload(w), w);
  });
});
