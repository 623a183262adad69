// Convention 8 (docs/development.md): a byte parser must not care where the network cut its input.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ALL_FIXTURES } from './fixtures.js';
import { runByteByByte, runSplitAt, runWhole } from './collect.js';

/** Bodies whose awkward spots (a trailing CR, a cut line, a BOM) sit near the end or the start. */
const EDGE_BODIES: readonly { name: string; body: string }[] = [
  { name: 'lone-CR line ends ending in a CR', body: 'data: {"choices":[{"delta":{"content":"a"}}]}\r\rdata: [DONE]\r\r' },
  { name: 'a body cut inside a data line', body: 'data: {"choices":[{"delta":{"content":"a"}}]}\n\ndata: {"choi' },
  { name: 'a body cut inside a comment line', body: ': ping\n\n: pi' },
  { name: 'a body opening with a BOM', body: '\uFEFFdata: {"choices":[{"delta":{"content":"a"}}]}\n\n' },
  { name: 'a body opening with the chars of a mis-decoded BOM', body: 'ï»¿data: [DONE]\n\n' },
];

describe('feeding a body in pieces', () => {
  for (const fixture of [...ALL_FIXTURES, ...EDGE_BODIES]) {
    it(`${fixture.name}: split in two at every byte offset gives the same events and message as whole`, () => {
      const bytes = Buffer.from(fixture.body, 'utf8');
      const whole = runWhole(bytes);
      for (let offset = 0; offset <= bytes.length; offset++) {
        assert.deepEqual(runSplitAt(bytes, offset), whole, `split at byte ${offset} of ${bytes.length}`);
      }
    });

    it(`${fixture.name}: byte by byte gives the same events and message as whole`, () => {
      const bytes = Buffer.from(fixture.body, 'utf8');
      assert.deepEqual(runByteByByte(bytes), runWhole(bytes));
    });
  }
});
