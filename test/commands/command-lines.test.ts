// Every command line roundload prints or writes for someone to paste (README.txt's, `repro`'s "run it:", the
// hints of errors and warnings, report.html's command) is pasted into bash in a throwaway folder with hostile
// values in it: the shell must split it into the words meant, and nothing may be created.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { appendToHistory } from '../../src/commands/history.js';
import { rebuildReports } from '../../src/commands/report.js';
import { corruptHistory } from '../../src/history/file-errors.js';
import { openHistory } from '../../src/history/index.js';
import { createRunFolder, readSummary } from '../../src/results/index.js';
import { writeRepro } from '../../src/repro/index.js';
import { folder, payloads } from '../helpers/hostile-run.js';
import { paste } from '../helpers/paste.js';
import { runCli, tempDir } from '../helpers/tmp.js';

/** Folder and file names a user or a run folder could bring: each tries to create `pwned` where it is pasted. */
const NAMES = ['o $(touch pwned)', 'o `touch pwned`', "o'; touch pwned; '", 'o"; touch pwned; "', 'o\ntouch pwned\n', 'o & touch pwned', 'o\u001b]0;t\u0007 $(touch pwned)'];
/** All of them in one name, for what runs the CLI (a process per try). */
const ALL_IN_ONE = NAMES.join(' ');

/** Pastes `line` in a fresh folder: it must be the command `words`, and create nothing. */
function assertPastes(t: TestContext, line: string | undefined, words: string[]): void {
  assert.ok(line !== undefined, `no command line found for ${JSON.stringify(words)}`);
  const cwd = tempDir(t, 'roundload-paste-');
  const pasted = paste(line, cwd);
  assert.deepEqual(pasted.created, [], `pasting ${JSON.stringify(line)} created files`);
  assert.deepEqual(pasted.words, words, `how bash split ${JSON.stringify(line)} (${pasted.stderr})`);
}

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  assert.fail('expected an error');
}

async function rejectionOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  assert.fail('expected a rejection');
}

describe('printed command lines, pasted into bash with hostile values', () => {
  it("repro's README.txt: node repro.mjs and sh repro.sh with a recorded target that is code", async (t) => {
    for (const text of payloads('pwned')) {
      const dir = folder(join(tempDir(t), 'run'), text);
      const { out, plan } = await writeRepro(dir);
      const readme = readFileSync(join(out, 'README.txt'), 'utf8');
      assertPastes(t, /^ {2}(node repro\.mjs --target [^\n]*?) {3}\(Node/m.exec(readme)?.[1], ['node', 'repro.mjs', '--target', plan.target]);
      assertPastes(t, /^ {2}(sh repro\.sh --target [^\n]*?) {3}\(curl/m.exec(readme)?.[1], ['sh', 'repro.sh', '--target', plan.target]);
    }
    // The failed request's id, recorded by someone else, in the line that finds it in the engine's log (an id
    // with a space, a quote or a backslash is not printed at all: these are the ones that are).
    for (const id of ['rl-$(touch${IFS}pwned)', 'rl-`touch${IFS}pwned`', 'rl-;touch${IFS}pwned', 'rl-|tee${IFS}pwned', 'rl->pwned', 'rl-&&touch${IFS}pwned']) {
      const dir = folder(join(tempDir(t), 'run'), 'plain', {
        failure: { status: 'hang', request_id: id, hang: { phase: 'headers', deadline: 'headers_ms', deadline_ms: 500, last_byte_age_ms: 500 } },
      });
      const readme = readFileSync(join((await writeRepro(dir)).out, 'README.txt'), 'utf8');
      assertPastes(t, /e\.g\. (grep -F [^\n]*? ENGINE_LOG)\n/.exec(readme)?.[1], ['grep', '-F', id, 'ENGINE_LOG']);
    }
  });

  it("`roundload repro`'s run it: line, with a hostile --out and a recorded target that is code", async (t) => {
    const dir = folder(join(tempDir(t), 'run'), '$(touch pwned)');
    const out = join(tempDir(t), ALL_IN_ONE);
    const res = await runCli(['repro', dir, '--out', out], { timeoutMs: 30_000 });
    assert.equal(res.code, 0, res.stderr);
    const line = /run it: (.*) {3}\(or (.*); see /s.exec(res.stderr);
    assertPastes(t, line?.[1], ['node', join(out, 'repro.mjs'), '--target', 'http://127.0.0.1:1/$(touch pwned)']);
    assertPastes(t, line?.[2], ['sh', join(out, 'repro.sh')]);
  });

  it('the hints of a used --out, a missing summary.json and a run not added to a history: roundload report, roundload history import', async (t) => {
    for (const name of NAMES) {
      const used = join(tempDir(t), name);
      mkdirSync(used);
      writeFileSync(join(used, 'run.json'), '{}');
      assertPastes(t, /already there: (.*)\)$/s.exec(messageOf(() => createRunFolder({ out: used, name: 'w' })))?.[1], ['roundload', 'report', used]);
      assertPastes(t, /rebuild it with `(.*)`$/s.exec(messageOf(() => readSummary(used)))?.[1], ['roundload', 'report', used]);
      // A history file under a file: it cannot be made, and the warning says how to add the run later.
      const history = join(used, 'run.json', `${name}.db`);
      const lines: string[] = [];
      assert.equal(await appendToHistory(history, used, (l) => lines.push(l)), false);
      assertPastes(t, /\(add it later: (.*)\)$/s.exec(lines.join('\n'))?.[1], ['roundload', 'history', 'import', history, used]);
    }
  });

  it('the hints of a missing and a corrupt history file: roundload history import, roundload run --history, sqlite3 .recover', async (t) => {
    for (const name of NAMES) {
      const file = join(tempDir(t), `${name}.db`);
      const missing = /\(`(.*) RUN_DIR…` or `(.*)` starts one\)$/s.exec(await rejectionOf(openHistory(file, { create: false })));
      assertPastes(t, missing?.[1], ['roundload', 'history', 'import', file]);
      assertPastes(t, missing?.[2], ['roundload', 'run', 'WORKLOAD', '--history', file]);
      assertPastes(t, /salvage its rows with `(.*?)`;/s.exec(corruptHistory(file, 'page 2').message)?.[1], ['sqlite3', file, '.recover']);
    }
  });

  it("`roundload record`'s closing hints: roundload trace show and --replay with a hostile --out", async (t) => {
    const out = join(tempDir(t), `${ALL_IN_ONE}.jsonl`);
    let stop = (): void => {};
    const res = await runCli(['record', '--upstream', 'http://127.0.0.1:1', '--listen', '127.0.0.1:0', '--out', out], {
      timeoutMs: 30_000,
      onData: (from, text) => {
        if (from === 'stdout' && text.includes('http://')) stop();
      },
      onSpawn: (pid) => (stop = () => process.kill(pid, 'SIGINT')),
    });
    assert.equal(res.code, 0, res.stderr);
    const line = /look at it: (.*); replay it: (.*)$/s.exec(res.stderr.trimEnd());
    assertPastes(t, line?.[1], ['roundload', 'trace', 'show', out]);
    assertPastes(t, line?.[2], ['roundload', 'run', 'WORKLOAD', '--replay', out]);
  });

  it("report.html's command: the run's argv, recorded by someone else", async (t) => {
    const unescape = (html: string): string => html.replace(/&(lt|gt|quot|#39|amp);/g, (_, e: string) => ({ lt: '<', gt: '>', quot: '"', '#39': "'", amp: '&' })[e] ?? '');
    for (const text of payloads('pwned')) {
      const dir = folder(join(tempDir(t), 'run'), text);
      await rebuildReports(dir);
      const code = /<code>(roundload [^<]*)<\/code>/.exec(readFileSync(join(dir, 'report.html'), 'utf8'))?.[1];
      assertPastes(t, code === undefined ? undefined : unescape(code), ['roundload', text]);
    }
  });
});
