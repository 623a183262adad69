// What a hostile server and a hostile run folder can put on a real terminal (issue 42 item 3): the CLI runs under a
// pty (util-linux `script`) against a server whose every text carries window-title, clipboard (OSC 52),
// clear-screen and C1 controls and line breaks, and the bytes the terminal got hold none of them and no line of
// the server's making: the live ERROR lines, the summary's error table and diagnosis, the preflight's warning
// and failure; then `report`, `history import|ls|show` and `compare` on a run folder whose every text is hostile.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hostileServer } from '../helpers/hostile-server.js';
import { assertTerminalClean, FORGED, hostileText } from '../helpers/hostile-text.js';
import { folder } from '../helpers/hostile-run.js';
import { cliArgs, ROOT } from '../helpers/root.js';
import { tempDir } from '../helpers/tmp.js';

const SCRIPT = spawnSync('script', ['--version']).status === 0;
const skip = SCRIPT ? false : 'util-linux script is not installed';

/** Runs roundload on a real terminal 200 columns wide, in colour; returns its exit code and what the terminal got. */
function onTerminal(args: string[]): Promise<{ code: number | null; bytes: string }> {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = `stty cols 200 rows 50; ${[process.execPath, ...cliArgs(...args)].map(quote).join(' ')}; echo "exit=$?"`;
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: ROOT, env: { ...process.env, NO_COLOR: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => chunks.push(d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', () => {
      clearTimeout(timer);
      const bytes = Buffer.concat(chunks).toString('utf8');
      const code = /exit=(\d+)\s*$/.exec(bytes);
      resolve({ code: code === null ? null : Number(code[1]), bytes: bytes.replace(/exit=\d+\s*$/, '') });
    });
  });
}

function workload(dir: string, url: string): string {
  const file = join(dir, 'hostile.yaml');
  writeFileSync(
    file,
    [
      'name: hostile',
      `target: { url: "${url}", model: m }`,
      'agents: { count: 2, rounds: 3, think_time_ms: 10 }',
      'conversation: { system_prompt_tokens: 50, first_user_tokens: 20, max_tokens: 8 }',
      'watchdog: { headers_ms: 5000, first_token_ms: 5000, stall_ms: 5000, total_ms: 10000 }',
      `monitor: { interval_ms: 200, targets: [{ name: srv, url: "${url}/metrics" }] }`,
      '',
    ].join('\n'),
  );
  return file;
}

test('a run against a hostile server: its error messages, SSE error events and model ids reach the terminal without a control or a forged line (its /metrics is scraped too)', { skip }, async (t) => {
  const dir = tempDir(t);
  const server = await hostileServer(t);
  const { code, bytes } = await onTerminal(['run', workload(dir, server.url), '--out', join(dir, 'out')]);
  t.diagnostic(JSON.stringify(bytes.slice(0, 3000)));
  assert.equal(code, 1, 'every request failed: thresholds failed');
  assert.ok(server.chats() >= 6, `${server.chats()} chat requests`);
  assertTerminalClean(bytes, 'run');
  assert.match(bytes, /preflight: warning: target\.model "m" is not among the models .*"model .*PWNED-TITLE/, 'the warning quotes the ids, on its line');
  assert.match(bytes, /ERROR\S* first of class \S*http_5xx\S*: a\d-c1 round \d \(agent \d\): HTTP 500: http-error .*FORGED-LINE carriage FORGED-LINE newline/, 'the live ERROR line, on one line');
  assert.match(bytes, /· server_error_event ×3, first .*: server error in stream: sse-error .*FORGED-LINE nel/, "the summary's error table, on one line");
  assert.ok(
    bytes.split('\n').some((l) => l.startsWith('gauges ')),
    'the gauges were shown',
  );
  assert.ok(bytes.includes('\x1b[33mERROR\x1b[39m'), "roundload's own colours stay");
});

test('a preflight refused with a hostile message: the failure and its model list reach the terminal without a control or a forged line (exit 3)', { skip }, async (t) => {
  const dir = tempDir(t);
  const server = await hostileServer(t, { failPreflight: true });
  const { code, bytes } = await onTerminal(['run', workload(dir, server.url), '--out', join(dir, 'out')]);
  t.diagnostic(JSON.stringify(bytes.slice(0, 2000)));
  assert.equal(code, 3);
  assertTerminalClean(bytes, 'preflight');
  assert.match(bytes, /roundload: preflight failed: the preflight request POST \S+ failed: HTTP 400: http-error .*FORGED-LINE nel/);
  assert.match(bytes, /\n {2}target\.model "m" is not served here; the server lists: "model .*FORGED-LINE nel", "second-model/, "the failure's own lines stay");
});

test('a hostile run folder: report, history import, ls and show, and compare print its name, status and texts without a control or a forged line', { skip }, async (t) => {
  const dir = tempDir(t);
  const text = hostileText('folder');
  const a = folder(join(dir, 'a'), text, { failure: { status: 'error', http_status: 500, hang: null, error: { class: 'http_5xx', message: text, code: null } } });
  const db = join(dir, 'h.db');
  const report = await onTerminal(['report', a]);
  assert.equal(report.code, 0, report.bytes);
  assertTerminalClean(report.bytes, 'report');
  assert.match(report.bytes, new RegExp(`roundload report: run folder .*${FORGED} nel · completed folder`), 'the name and status, on one line');
  const imported = await onTerminal(['history', 'import', db, a]);
  assert.equal(imported.code, 0, imported.bytes);
  const ls = await onTerminal(['history', 'ls', db]);
  assert.equal(ls.code, 0, ls.bytes);
  assertTerminalClean(ls.bytes, 'history ls');
  assert.equal(ls.bytes.trim().split('\n').length, 2, `a head and one run: ${JSON.stringify(ls.bytes)}`);
  const runId = /\n(\S+)/.exec(ls.bytes)![1]!;
  const show = await onTerminal(['history', 'show', db, runId]);
  assert.equal(show.code, 0, show.bytes);
  assertTerminalClean(show.bytes, 'history show');
  const b = folder(join(dir, 'b'), text);
  await onTerminal(['report', b]);
  const compared = await onTerminal(['compare', a, b, '--out', join(dir, 'cmp')]);
  t.diagnostic(JSON.stringify(compared.bytes.slice(0, 1500)));
  assertTerminalClean(compared.bytes, 'compare');
});

test("an error's message keeps its own lines only: a carriage return, NEL or U+2028 in what it quotes does not reach the terminal", (t) => {
  const file = join(tempDir(t), `h\r${FORGED} cr\u0085${FORGED} nel\u2028${FORGED} ls.db`);
  const r = spawnSync(process.execPath, cliArgs('history', 'show', file, 'x'), { encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /^roundload: .*no such history file/);
  assertTerminalClean(r.stderr, 'the error');
});
