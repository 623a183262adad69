import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import { ResultsError } from '../../src/errors.js';
import { fakeChat, okAnswer } from '../helpers/fake-chat.js';
import { withTmpfs } from '../helpers/mount.js';

test('a results file the writer thread cannot create stops the run before any request is sent', async (t) => {
  const server = await fakeChat(t, (_req, res) => okAnswer(res));
  // Room for the volume's root, the run's folder and run.json (and its temporary copy), not for the .jsonl files.
  await withTmpfs(
    t,
    '1m',
    async (mount) => {
      const workload = parseWorkload(
        [
          'name: writer-start',
          `target: {url: "${server.url}"}`,
          'agents: {count: 4, rounds: 3, think_time_ms: 0}',
          'monitor: {enabled: false, canary_interval_s: 0}',
          'conversation: {tools: none, system_prompt_tokens: 20, first_user_tokens: 10, max_tokens: 8}',
        ].join('\n'),
        'writer-start.yaml',
      );
      await assert.rejects(executeRun({ workload, out: join(mount, 'run'), preflight: false }), (error: unknown) => {
        assert.ok(error instanceof ResultsError, String(error));
        assert.match(error.message, /\.jsonl: no space left on device \(ENOSPC\)/);
        return true;
      });
      assert.equal(server.requests.length, 0, `requests the server got: ${server.requests.length}`);
    },
    { inodes: 4 },
  );
});
