// A run folder received from someone else is what `repro`, `report` and `compare` exist for: every recorded
// string is set to text that would run as code if it were pasted into a script or a page, and the files
// written from it must stay data (sh -n, node --check, no file created when run, no markup in the pages).
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createServer as createHttpServer } from 'node:http';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { writeComparisons } from '../../src/commands/compare.js';
import { rebuildReports } from '../../src/commands/report.js';
import { compareArms, loadRun } from '../../src/compare/index.js';
import { RecordError } from '../../src/errors.js';
import { writeRepro } from '../../src/repro/index.js';
import { folder, payloads } from '../helpers/hostile-run.js';
import { tempDir } from '../helpers/tmp.js';

/** A port that was bound on 127.0.0.1 and closed again: a connection there is refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): { code: number | null; out: string } {
  const r = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: 20_000, env: { PATH: process.env.PATH, ...env } });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

/** A chat server that answers every request with a short stream and keeps what the scripts sent. */
interface Captured {
  header: string | undefined;
  authorization: string | undefined;
  sessionKey: unknown;
  body: Record<string, unknown>;
}

async function captureServer(t: TestContext): Promise<{ url: string; requests: Captured[] }> {
  const requests: Captured[] = [];
  const server = createHttpServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const header = req.headers["x-weird`$'|&~"];
      const parsed = JSON.parse(body) as Record<string, unknown>;
      requests.push({ header: typeof header === 'string' ? header : undefined, authorization: req.headers.authorization, sessionKey: parsed.session_key, body: parsed });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const address = server.address();
  return { url: `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`, requests };
}

/** A child process that does not block this one's event loop (the capture server answers it), bounded. */
function runAsync(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve(`exit ${code}: ${out}`);
    });
  });
}

async function reproOf(t: TestContext, text: string, opts: { torn?: boolean; secret?: string } = {}): Promise<string> {
  const dir = folder(join(tempDir(t), 'run'), text, opts);
  return (await writeRepro(dir)).out;
}

describe('repro from a hostile run folder', () => {
  it('every recorded free-text field set to code stays data: sh -n and node --check pass, comments keep one line, and running both scripts against a closed port creates nothing', async (t) => {
    const port = await closedPort();
    const work = tempDir(t);
    const canary = join(work, 'pwned');
    for (const text of payloads(canary)) {
      const out = await reproOf(t, text);
      const sh = readFileSync(join(out, 'repro.sh'), 'utf8');
      const mjs = readFileSync(join(out, 'repro.mjs'), 'utf8');
      assert.equal(run('sh', ['-n', 'repro.sh'], out).code, 0, `sh -n failed for ${JSON.stringify(text)}`);
      assert.equal(run(process.execPath, ['--check', 'repro.mjs'], out).code, 0, `node --check failed for ${JSON.stringify(text)}`);
      // The comment blocks stay comments: every line up to the code starts with the comment mark.
      const shHead = sh.split('\nset -eu\n')[0]!.split('\n').slice(1);
      assert.ok(shHead.length >= 17 && shHead.every((line) => line.startsWith('#')), `repro.sh's comments broke: ${shHead.join('|')}`);
      const mjsHead = mjs
        .split("\nimport http from 'node:http';")[0]!
        .split(/\r\n|[\n\r\u2028\u2029]/)
        .slice(1);
      assert.ok(mjsHead.length >= 7 && mjsHead.every((line) => line.startsWith('//')), `repro.mjs's comments broke: ${mjsHead.join('|')}`);
      const shRun = run('sh', ['repro.sh', '--target', `http://127.0.0.1:${port}`], out);
      const mjsRun = run(process.execPath, ['repro.mjs', '--target', `http://127.0.0.1:${port}`, '--max-time', '10'], out);
      assert.ok(shRun.code === 1 || shRun.code === 0, `repro.sh exit ${shRun.code}: ${shRun.out}`);
      assert.ok(mjsRun.code === 1 || mjsRun.code === 2, `repro.mjs exit ${mjsRun.code}: ${mjsRun.out}`);
      assert.equal(existsSync(canary), false, `${JSON.stringify(text)} created ${canary}`);
    }
  });

  it('secrets of the folder are not written: headers off the allow-list and extra_body strings at any depth (but known options) come from named variables and are sent when set', async (t) => {
    const out = await reproOf(t, 'plain', { secret: 'sk-secret-Zq8Wv3Tn5Kp2' });
    for (const name of ['repro.sh', 'repro.mjs', 'README.txt', ...readdirSync(join(out, 'bodies')).map((b) => join('bodies', b))]) {
      assert.ok(!readFileSync(join(out, name), 'utf8').includes('sk-secret-Zq8Wv3Tn5Kp2'), `${name} holds the secret`);
    }
    const readme = readFileSync(join(out, 'README.txt'), 'utf8');
    assert.match(readme, /ROUNDLOAD_HEADER_X_WEIRD\b/);
    for (const name of ['ROUNDLOAD_EXTRA_SESSION_KEY', 'ROUNDLOAD_EXTRA_BEARER', 'ROUNDLOAD_EXTRA_SAS', 'ROUNDLOAD_EXTRA_DEEP_A_0_PWD', 'ROUNDLOAD_EXTRA_METADATA_USER_PRIVATE'])
      assert.match(readme, new RegExp(name));
    const body = JSON.parse(readFileSync(join(out, 'bodies', '001.json'), 'utf8')) as Record<string, unknown>;
    assert.equal(body.session_key, '${ROUNDLOAD_EXTRA_SESSION_KEY}');
    assert.deepEqual(body.deep, { a: [{ pwd: '${ROUNDLOAD_EXTRA_DEEP_A_0_PWD}' }, 3] });
    assert.equal(body.reasoning_effort, 'high', 'a known option is sent as it was');
    // Set, the variables are sent: the header as it is, the body field as a JSON string (quotes and all).
    const seen = await captureServer(t);
    const env = { ROUNDLOAD_HEADER_X_WEIRD: 'hv-"1\\', ROUNDLOAD_EXTRA_SESSION_KEY: 'sv-"2\\', ROUNDLOAD_EXTRA_DEEP_A_0_PWD: 'pv-3' };
    for (const [command, args] of [
      ['sh', ['repro.sh', '--target', seen.url]],
      [process.execPath, ['repro.mjs', '--target', seen.url, '--max-time', '10']],
    ] as const) {
      seen.requests.length = 0;
      const r = await runAsync(command, [...args], out, env);
      assert.equal(seen.requests.length, 3, `${command}: ${r}`);
      for (const req of seen.requests) {
        assert.equal(req.header, 'hv-"1\\', `${command} sent the header from its variable`);
        assert.equal(req.sessionKey, 'sv-"2\\', `${command} sent the body field from its variable`);
        assert.deepEqual(req.body.deep, { a: [{ pwd: 'pv-3' }, 3] }, `${command} sent the deep body field from its variable`);
      }
    }
  });

  it('a torn last line of a killed run is still skipped', async (t) => {
    const out = await reproOf(t, 'plain', { torn: true });
    assert.match(readFileSync(join(out, 'README.txt'), 'utf8'), /hang at headers/);
  });

  it('an id, a time or a class that breaks the rules stops repro with a RecordError naming the file, the line and the field (exit 2)', async (t) => {
    const text = '2026-12-05T08:00:00.000Z\ntouch pwned\n#';
    const cases: [string, Record<string, unknown>][] = [
      ['t', { t: text }],
      ['conversation', { conversation: text }],
      ['phase', { phase: text }],
      ['connection.id', { connection: { id: text, nth: 3, local_port: 1, age_ms: 1, idle_ms: 1, tls: null } }],
      ['error.class', { status: 'error', error: { class: text, message: 'm', code: null } }],
      ['hang.deadline', { hang: { phase: 'headers', deadline: text, deadline_ms: 1, last_byte_age_ms: 1 } }],
    ];
    for (const [field, failure] of cases) {
      const dir = folder(join(tempDir(t), 'run'), 'plain', { failure: { status: 'hang', hang: { phase: 'headers', deadline: 'headers_ms', deadline_ms: 500, last_byte_age_ms: 500 }, ...failure } });
      await assert.rejects(writeRepro(dir), (error: unknown) => {
        assert.ok(error instanceof RecordError, String(error));
        assert.equal(error.exitCode, 2);
        assert.deepEqual(error.context, { file: join(dir, 'requests.jsonl'), line: 3, field });
        assert.ok(!error.message.includes('touch pwned'), 'the message quotes no recorded value');
        return true;
      });
    }
  });
});

describe('the API key a received repro sends', () => {
  it("run.json's api_key_env chooses nothing: a plain run sends no key from the variable it names, ROUNDLOAD_API_KEY or the variable named by --api-key-env is sent, and no file names the folder's variable", async (t) => {
    const dir = folder(join(tempDir(t), 'run'), 'plain');
    const manifest = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as { workload: { target: { api_key_env: string } } };
    manifest.workload.target.api_key_env = 'GITHUB_TOKEN';
    writeFileSync(join(dir, 'run.json'), JSON.stringify(manifest));
    const out = (await writeRepro(dir)).out;
    for (const name of ['repro.sh', 'repro.mjs', 'README.txt']) assert.ok(!readFileSync(join(out, name), 'utf8').includes('GITHUB_TOKEN'), `${name} names the folder's variable`);
    assert.match(readFileSync(join(out, 'README.txt'), 'utf8'), /ROUNDLOAD_API_KEY/);
    const seen = await captureServer(t);
    const cases: [string, NodeJS.ProcessEnv, string[], string | undefined][] = [
      ['no flag, the named variable set', { GITHUB_TOKEN: 'ghp-user-token-1' }, [], undefined],
      ['ROUNDLOAD_API_KEY', { GITHUB_TOKEN: 'ghp-user-token-1', ROUNDLOAD_API_KEY: 'rk-2' }, [], 'Bearer rk-2'],
      ['--api-key-env MY_KEY', { GITHUB_TOKEN: 'ghp-user-token-1', ROUNDLOAD_API_KEY: 'rk-2', MY_KEY: 'mk-3' }, ['--api-key-env', 'MY_KEY'], 'Bearer mk-3'],
    ];
    for (const [what, env, flags, expected] of cases) {
      for (const [command, args] of [
        ['sh', ['repro.sh', '--target', seen.url, ...flags]],
        [process.execPath, ['repro.mjs', '--target', seen.url, '--max-time', '10', ...flags]],
      ] as const) {
        seen.requests.length = 0;
        const r = await runAsync(command, [...args], out, env);
        assert.equal(seen.requests.length, 3, `${command}, ${what}: ${r}`);
        for (const req of seen.requests) assert.equal(req.authorization, expected, `${command}, ${what}`);
      }
    }
    // A variable named on the command line but not set is an error, not a run without the key.
    for (const [command, args] of [
      ['sh', ['repro.sh', '--target', seen.url, '--api-key-env', 'UNSET_KEY']],
      [process.execPath, ['repro.mjs', '--target', seen.url, '--api-key-env', 'UNSET_KEY']],
    ] as const) {
      seen.requests.length = 0;
      const r = await runAsync(command, [...args], out, {});
      assert.match(r, /^exit 2: /, `${command}: ${r}`);
      assert.match(r, /UNSET_KEY/);
      assert.equal(seen.requests.length, 0);
    }
  });
});

describe('repro from a run.json that breaks the rules', () => {
  it('a line break in what goes into a line of curl config (the target, a header value) or a header name that is not one is a RecordError on run.json (exit 2)', async (t) => {
    const edits: [string, (m: { route: Record<string, unknown>; workload: { target: { headers: Record<string, string> } } }) => void][] = [
      ['route.request_url', (m) => (m.route.request_url = 'http://127.0.0.1:1/\noutput = "/tmp/x"')],
      ['workload.target.headers.User-Agent', (m) => (m.workload.target.headers['User-Agent'] = 'ua\noutput = "/tmp/x"')],
      ['workload.target.headers', (m) => (m.workload.target.headers['X-A: b\nc'] = 'v')],
    ];
    for (const [field, edit] of edits) {
      const dir = folder(join(tempDir(t), 'run'), 'plain');
      const manifest = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as Parameters<typeof edit>[0];
      edit(manifest);
      writeFileSync(join(dir, 'run.json'), JSON.stringify(manifest));
      await assert.rejects(writeRepro(dir), (error: unknown) => {
        assert.ok(error instanceof RecordError, String(error));
        assert.deepEqual(error.context, { file: join(dir, 'run.json'), line: 0, field });
        return true;
      });
    }
  });
});

describe('report.html from a hostile run folder', () => {
  it('recorded text stays text: no script element is closed early and no markup of the payload is in the page', async (t) => {
    const baseline = folder(join(tempDir(t), 'plain'), 'plain');
    await rebuildReports(baseline);
    const scripts = (html: string): number => html.split('<script').length;
    const plain = readFileSync(join(baseline, 'report.html'), 'utf8');
    for (const text of payloads(join(tempDir(t), 'pwned'))) {
      const dir = folder(join(tempDir(t), 'run'), text);
      await rebuildReports(dir);
      const html = readFileSync(join(dir, 'report.html'), 'utf8');
      assert.equal(scripts(html), scripts(plain), `a <script was added by ${JSON.stringify(text)}`);
      assert.equal(html.split('</script').length, plain.split('</script').length, `a </script was added by ${JSON.stringify(text)}`);
      assert.ok(!html.includes('<img src=x'), 'no element of the payload');
      assert.ok(!html.includes('<!--'), 'no comment opened');
      if (text.includes('</script>')) assert.ok(html.includes('&lt;/script&gt;') && html.includes('\\u003c/script'), 'the payload is on the page, escaped, as text and as data');
    }
  });
});

describe('compare.html from hostile run folders', () => {
  it('recorded text (run names, labels, workload fields) stays text: no script element or markup of the payload is added', async (t) => {
    const page = async (text: string): Promise<string> => {
      const dirs = [folder(join(tempDir(t), 'a'), text), folder(join(tempDir(t), 'b'), text)];
      for (const dir of dirs) await rebuildReports(dir);
      const [a, b] = await Promise.all(dirs.map(async (d) => ({ name: `arm ${text}`, runs: [await loadRun(d)] })));
      const comparison = compareArms(a!, b!, { force: true });
      return readFileSync(writeComparisons([comparison], join(tempDir(t), 'compare.html'), [{ a: a!, b: b! }]).html, 'utf8');
    };
    const plain = await page('plain');
    const count = (html: string, tag: string): number => html.split(tag).length;
    for (const text of payloads(join(tempDir(t), 'pwned'))) {
      const html = await page(text);
      assert.equal(count(html, '<script'), count(plain, '<script'), `a <script was added by ${JSON.stringify(text)}`);
      assert.equal(count(html, '</script'), count(plain, '</script'), `a </script was added by ${JSON.stringify(text)}`);
      assert.ok(!html.includes('<img src=x'), 'no element of the payload');
      if (text.includes('</script>')) assert.ok(html.includes('&lt;/script&gt;') && html.includes('\\u003c/script'), 'the payload is on the page, escaped, as text and as data');
    }
  });
});
