// The exposition parser on SGLang-shaped output and awkward corners, whole and split at every offset.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ExpositionParser, parseExposition, parseFloatToken, type Exposition } from '../../src/monitor/index.js';
import { BROKEN, CORNERS, PREFILL_TP2 } from './fixtures.js';

function byName(e: Exposition, name: string) {
  return e.samples.filter((s) => s.name === name);
}

describe('exposition parser', () => {
  it('reads every series of a PD prefill server with all its labels, histograms and counters typed by their family', () => {
    const e = parseExposition(PREFILL_TP2);
    assert.deepEqual(e.issues, []);
    const inflight = byName(e, 'sglang:num_prefill_inflight_queue_reqs');
    assert.equal(inflight.length, 2);
    assert.deepEqual(inflight[1]!.labels, { engine_type: 'prefill', model_name: 'deepseek-ai/DeepSeek-V3', pid: '41823', pp_rank: '0', tp_rank: '1' });
    assert.equal(inflight[0]!.value, 1);
    assert.equal(inflight[0]!.type, 'gauge');
    assert.equal(e.families.get('sglang:num_prefill_inflight_queue_reqs')?.help, 'The number of requests in the prefill inflight queue.');
    assert.ok(Number.isNaN(byName(e, 'sglang:gen_throughput')[0]!.value), 'NaN is a value');
    assert.equal(byName(e, 'sglang:prompt_tokens_total')[0]!.value, 8_128_902);
    assert.equal(byName(e, 'sglang:prompt_tokens_total')[0]!.type, 'counter');
    assert.equal(byName(e, 'sglang:prompt_tokens_created')[0]!.family, 'sglang:prompt_tokens_total', '_created belongs to the _total family');
    const inf = byName(e, 'sglang:time_to_first_token_seconds_bucket').find((s) => s.labels.le === '+Inf');
    assert.equal(inf?.value, 40211);
    assert.equal(inf?.type, 'histogram');
    assert.equal(inf?.family, 'sglang:time_to_first_token_seconds');
    assert.equal(byName(e, 'sglang:time_to_first_token_seconds_sum')[0]!.value, 2.3518979474117756e6);
    assert.equal(byName(e, 'sglang:time_to_first_token_seconds_count')[0]!.family, 'sglang:time_to_first_token_seconds');
    assert.equal(e.samples.length, 19);
  });

  it('unescapes labels and help, reads blanks, tabs, trailing commas, timestamps, ±Inf, CRLF, quoted names and exemplars', () => {
    const e = parseExposition(CORNERS);
    assert.deepEqual(e.issues, []);
    assert.equal(e.families.get('odd_gauge')?.help, 'A help text with a \\ backslash and a\nsecond line');
    const [first, second, third] = byName(e, 'odd_gauge');
    assert.deepEqual(first?.labels, { path: 'C:\\tmp', quote: 'say "hi"', nl: 'a\nb', utf: 'é→✓' });
    assert.equal(first?.value, -Infinity);
    assert.equal(first?.timestampMs, 1712345678901);
    assert.deepEqual(second?.labels, { a: '1', b: '2' });
    assert.equal(second?.value, Infinity);
    assert.equal(third?.value, 42);
    assert.equal(third?.timestampMs, -5);
    const dotted = byName(e, 'my.dotted.metric')[0];
    assert.deepEqual(dotted?.labels, { le: '0.5' });
    assert.equal(dotted?.value, 0.0075);
    assert.equal(byName(e, 'bare_total')[0]?.type, 'untyped');
    assert.equal(byName(e, 'openmetrics_sample')[0]?.timestampMs, 1712345678250);
    assert.equal(e.samples.length, 6);
    assert.equal(e.lines, 12);
  });

  it('skips each malformed line with its line number and keeps the good ones', () => {
    const e = parseExposition(BROKEN);
    assert.deepEqual(
      e.samples.map((s) => s.name),
      ['good_one', 'good_two'],
    );
    assert.deepEqual(
      e.issues.map((i) => i.line),
      [2, 3, 4, 5, 6, 7, 8, 9, 10],
    );
    const messages = e.issues.map((i) => i.message);
    assert.match(messages[0]!, /bad_value: value "one" is not a number/);
    assert.match(messages[1]!, /expected "," or "}" after a label value, got "2"/);
    assert.match(messages[2]!, /a label value is not closed on its line/);
    assert.match(messages[3]!, /invalid escape "\\t"/);
    assert.match(messages[4]!, /label a appears twice/);
    assert.match(messages[5]!, /unknown type "sometype"/);
    assert.match(messages[6]!, /no_value: expected a blank before the value/);
    assert.match(messages[7]!, /expected a metric name/);
    assert.match(messages[8]!, /trailing: unexpected "3"/);
  });

  it('gives the same result however the text is split, at every offset and in three pieces', () => {
    for (const text of [PREFILL_TP2, CORNERS, BROKEN]) {
      const whole = parseExposition(text);
      for (let i = 0; i <= text.length; i += 1) {
        const p = new ExpositionParser();
        p.feed(text.slice(0, i));
        p.feed(text.slice(i));
        assert.deepEqual(p.end(), whole, `split at ${i}`);
      }
      for (let i = 0; i < text.length; i += 7) {
        const j = Math.min(text.length, i + 13);
        const p = new ExpositionParser();
        p.feed(text.slice(0, i));
        p.feed(text.slice(i, j));
        p.feed('');
        p.feed(text.slice(j));
        assert.deepEqual(p.end(), whole, `split at ${i} and ${j}`);
      }
    }
  });

  it('with a keep filter parses only the wanted names (the rest is not even read)', () => {
    const e = parseExposition(PREFILL_TP2 + 'junk{ 1\n', { keep: (n) => n.endsWith('_reqs') });
    assert.deepEqual(e.issues, [], 'an unwanted malformed line is skipped unread');
    assert.deepEqual(
      [...new Set(e.samples.map((s) => s.name))],
      ['sglang:num_running_reqs', 'sglang:num_queue_reqs', 'sglang:num_prefill_inflight_queue_reqs', 'sglang:num_prefill_bootstrap_queue_reqs'],
    );
  });

  it('reads floats as Go does: exponents, signs, Inf, NaN in any case; rejects the rest', () => {
    for (const [text, value] of [
      ['1.0', 1],
      ['-2.5e-3', -0.0025],
      ['.5', 0.5],
      ['5.', 5],
      ['+Inf', Infinity],
      ['-inf', -Infinity],
      ['Infinity', Infinity],
      ['1e+06', 1e6],
    ] as const) {
      assert.equal(parseFloatToken(text), value, text);
    }
    assert.ok(Number.isNaN(parseFloatToken('NaN')!));
    assert.ok(Number.isNaN(parseFloatToken('nan')!));
    for (const bad of ['', 'one', '1.2.3', '0x10', '1e', '--1', 'Inf1']) assert.equal(parseFloatToken(bad), null, bad);
  });

  it('a large exposition parses quickly enough for 100 ms bursts', () => {
    const big = Array.from({ length: 200 }, () => PREFILL_TP2).join('');
    // CPU time, not wall time: another process on the cores makes the parse wait, not work more.
    const before = process.cpuUsage();
    const e = parseExposition(big);
    const cpu = process.cpuUsage(before);
    const ms = (cpu.user + cpu.system) / 1000;
    assert.equal(e.samples.length, 19 * 200);
    assert.ok(ms < 500, `${(big.length / 1024).toFixed(0)} KiB in ${ms.toFixed(1)} ms of CPU`);
  });
});
