// The request extras of a workload: `target.extra_body`, `target.headers`, `conversation.reasoning_history`,
// `thresholds.answer_warnings`: what they accept, the located errors for what they refuse, and what run.json
// keeps of secret-looking headers.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseWorkload, redactWorkload, workloadSecrets } from '../../src/config/index.js';
import { SecretScrubber } from '../../src/util/index.js';
import { WorkloadError, type WorkloadIssue } from '../../src/errors.js';

const FILE = 'workloads/test.yaml';

function issuesOf(text: string, set: string[] = []): readonly WorkloadIssue[] {
  try {
    parseWorkload(text, FILE, { set });
  } catch (error) {
    assert.ok(error instanceof WorkloadError, `expected a WorkloadError, got ${String(error)}`);
    return error.issues;
  }
  assert.fail('expected the workload to be rejected');
}

describe('target.extra_body', () => {
  it('a mapping of any fields is kept as written', () => {
    const w = parseWorkload('target:\n  extra_body:\n    chat_template_kwargs: {thinking: true}\n    separate_reasoning: true\n    top_p: 0.95\n', FILE);
    assert.deepEqual(w.target.extra_body, { chat_template_kwargs: { thinking: true }, separate_reasoning: true, top_p: 0.95 });
    assert.deepEqual(parseWorkload('', FILE).target.extra_body, {});
  });

  it('a field roundload sets itself is an error at the line:col of its value, naming where to set it instead', () => {
    const issues = issuesOf('target:\n  extra_body:\n    top_p: 0.9\n    max_tokens: 512\n    stream: false\n');
    assert.deepEqual(
      issues.map((i) => [i.where, i.field]),
      [
        [`${FILE}:4:17`, 'target.extra_body.max_tokens'],
        [`${FILE}:5:13`, 'target.extra_body.stream'],
      ],
    );
    assert.match(issues[0]!.message, /max_tokens cannot be set in extra_body: roundload sets it from conversation\.max_tokens/);
    for (const key of ['messages', 'model', 'tools', 'stream_options', 'tool_choice', 'temperature']) {
      assert.equal(issuesOf(`target:\n  extra_body:\n    ${key}: 1\n`)[0]?.field, `target.extra_body.${key}`, key);
    }
  });
});

describe('target.headers', () => {
  it("header values are strings (numbers read as such); any name but roundload's own is accepted", () => {
    const w = parseWorkload('target:\n  headers:\n    X-Session-Id: s-1\n    X-Priority: 5\n    User-Agent: my-harness/2\n', FILE);
    assert.deepEqual(w.target.headers, { 'X-Session-Id': 's-1', 'X-Priority': '5', 'User-Agent': 'my-harness/2' });
  });

  it("Authorization is refused with a located error pointing at api_key_env; so are HTTP's own headers and case twins", () => {
    const issues = issuesOf('target:\n  headers:\n    Authorization: Bearer sk-1\n    Content-Type: text/plain\n    x-a: 1\n    X-A: 2\n');
    assert.deepEqual(
      issues.map((i) => [i.where, i.field]),
      [
        [`${FILE}:3:20`, 'target.headers.Authorization'],
        [`${FILE}:4:19`, 'target.headers.Content-Type'],
        [`${FILE}:6:10`, 'target.headers.X-A'],
      ],
    );
    assert.match(issues[0]!.message, /target\.api_key_env/);
    assert.match(issues[2]!.message, /given twice \(also as x-a\)/);
  });

  it('a header name with a space or a value with a line break is refused', () => {
    assert.match(issuesOf('target:\n  headers:\n    "X Bad": 1\n')[0]!.message, /HTTP header name/);
    assert.match(issuesOf('target:\n  headers:\n    X-Ok: "a\\r\\nX-Injected: 1"\n')[0]!.message, /line break/);
  });

  it("every header value is masked in run.json's workload and is a secret the run's scrubber replaces everywhere (argv too), unless its header is known public or listed in public_headers", () => {
    const w = parseWorkload(
      'target:\n  headers:\n    X-Api-Key: sk-live-1\n    Ocp-Apim-Subscription-Key: sub-5678\n    X-Goog-Iap-Jwt-Assertion: eyJhbGciOi.jwt\n    X-Session-Id: s-123\n    User-Agent: my-agent/1\n  public_headers: [x-session-id]\n',
      FILE,
    );
    const copy = redactWorkload(w) as typeof w;
    assert.deepEqual(copy.target.headers, {
      'X-Api-Key': '[redacted]',
      'Ocp-Apim-Subscription-Key': '[redacted]',
      'X-Goog-Iap-Jwt-Assertion': '[redacted]',
      'X-Session-Id': 's-123',
      'User-Agent': 'my-agent/1',
    });
    assert.equal(w.target.headers['X-Api-Key'], 'sk-live-1', 'the workload itself is untouched');
    assert.deepEqual(workloadSecrets(w, {}).sort(), ['eyJhbGciOi.jwt', 'sk-live-1', 'sub-5678']);
    const scrubber = new SecretScrubber(workloadSecrets(w, {}));
    assert.deepEqual(scrubber.value(['run', '--set', 'target.headers.Ocp-Apim-Subscription-Key=sub-5678', '--set', 'target.headers.X-Session-Id=s-123']), [
      'run',
      '--set',
      'target.headers.Ocp-Apim-Subscription-Key=***',
      '--set',
      'target.headers.X-Session-Id=s-123',
    ]);
  });

  it('every extra_body string at any depth is masked and scrubbed unless its top-level key is in public_extra_body or it is a known request option; numbers and booleans stay', () => {
    const w = parseWorkload(
      [
        'target:',
        '  extra_body:',
        '    bearer: brr-1111',
        '    pwd: pwd-2222',
        '    sas: "sv=2021-08-06&sig=Sas3333"',
        '    metadata: {user_private: priv-4444, team: blue-5555, tags: [tag-6666, 7]}',
        '    max_new_tokens: 512',
        '    routing: {pool: route-77}',
        '    reasoning_effort: high',
        '    top_k: 20',
        '    chat_template_kwargs: {enable_thinking: true, thinking: "true", custom_hint: kw-8888}',
        '    reasoning: {effort: medium, token: rt-9999}',
        '  public_extra_body: [routing]',
        '',
      ].join('\n'),
      FILE,
    );
    const copy = redactWorkload(w) as typeof w;
    assert.deepEqual(copy.target.extra_body, {
      bearer: '[redacted]',
      pwd: '[redacted]',
      sas: '[redacted]',
      metadata: { user_private: '[redacted]', team: '[redacted]', tags: ['[redacted]', 7] },
      max_new_tokens: 512,
      routing: { pool: 'route-77' },
      reasoning_effort: 'high',
      top_k: 20,
      chat_template_kwargs: { enable_thinking: true, thinking: 'true', custom_hint: '[redacted]' },
      reasoning: { effort: 'medium', token: '[redacted]' },
    });
    assert.deepEqual(workloadSecrets(w, {}).sort(), ['blue-5555', 'brr-1111', 'kw-8888', 'priv-4444', 'pwd-2222', 'rt-9999', 'sv=2021-08-06&sig=Sas3333', 'tag-6666']);
  });

  it("a known option's name inherited from Object.prototype (constructor, toString) or put under another key is not an option: its strings are masked", () => {
    const w = parseWorkload('target:\n  extra_body:\n    constructor: c-1111\n    toString: {a: t-2222}\n    nested: {reasoning_effort: n-3333}\n', FILE);
    assert.deepEqual((redactWorkload(w) as typeof w).target.extra_body, { constructor: '[redacted]', toString: { a: '[redacted]' }, nested: { reasoning_effort: '[redacted]' } });
  });

  it('public_headers and public_extra_body must name what is there: a typo is located', () => {
    const issues = issuesOf('target:\n  headers: {X-Session-Id: s}\n  public_headers: [X-Sesion-Id]\n  extra_body: {session_key: k}\n  public_extra_body: [sesion_key]\n');
    assert.deepEqual(
      issues.map((i) => i.message),
      ['X-Sesion-Id is not a header of target.headers', 'sesion_key is not a key of target.extra_body'],
    );
  });
});

describe('conversation.reasoning_history and thresholds.answer_warnings', () => {
  it('reasoning_history is keep by default, drop on request, nothing else', () => {
    assert.equal(parseWorkload('', FILE).conversation.reasoning_history, 'keep');
    assert.equal(parseWorkload('conversation:\n  reasoning_history: drop\n', FILE).conversation.reasoning_history, 'drop');
    assert.match(issuesOf('conversation:\n  reasoning_history: strip\n')[0]!.message, /must be one of keep, drop/);
  });

  it('answer_warnings is a share for any warning or a mapping per class; an unknown class is located with a suggestion', () => {
    assert.equal(parseWorkload('thresholds:\n  answer_warnings: 0.01\n', FILE).thresholds.answer_warnings, 0.01);
    assert.deepEqual(parseWorkload('thresholds:\n  answer_warnings: {tool_markup_in_content: 0}\n', FILE).thresholds.answer_warnings, { tool_markup_in_content: 0 });
    const [issue] = issuesOf('thresholds:\n  answer_warnings:\n    tool_markup_in_contnet: 0\n');
    assert.equal(issue!.where, `${FILE}:3:29`);
    assert.match(issue!.message, /unknown warning class "tool_markup_in_contnet" \(did you mean "tool_markup_in_content"\?\)/);
    assert.match(issuesOf('thresholds:\n  answer_warnings: 2\n')[0]!.message, /at most 1/);
  });
});
