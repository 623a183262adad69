import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseDurationMs } from '../../src/config/index.js';

describe('parseDurationMs', () => {
  it('reads each unit and combinations, largest unit first', () => {
    const cases: [string, number][] = [
      ['500ms', 500],
      ['30s', 30_000],
      ['5m', 300_000],
      ['8h', 28_800_000],
      ['2d', 172_800_000],
      ['1h30m', 5_400_000],
      ['1h 30m 15s', 5_415_000],
      ['1.5h', 5_400_000],
      ['0.1s', 100],
      ['2m500ms', 120_500],
      [' 45s ', 45_000],
      ['0s', 0],
    ];
    for (const [text, ms] of cases) assert.equal(parseDurationMs(text), ms, text);
  });

  it('a bare number means seconds, as a string or a number', () => {
    assert.equal(parseDurationMs('90'), 90_000);
    assert.equal(parseDurationMs(90), 90_000);
    assert.equal(parseDurationMs(0.25), 250);
  });

  it('junk, negative, repeated or out-of-order units throw an Error that quotes the input', () => {
    for (const bad of ['', 'abc', '30x', 's', '-5s', '1h1h', '30s5m', '5 m x', '1e3s', '1,5h']) {
      assert.throws(
        () => parseDurationMs(bad),
        (error: unknown) => error instanceof Error && error.message.includes(JSON.stringify(bad)),
        bad,
      );
    }
    assert.throws(() => parseDurationMs(-1), /non-negative/);
    assert.throws(() => parseDurationMs(Number.NaN), /non-negative/);
    assert.throws(() => parseDurationMs(Infinity), /non-negative/);
  });
});
