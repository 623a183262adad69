// Test helper: a real, tiny tmpfs (a full disk, a read-only volume), unmounted afterwards. Mounting needs root
// (CAP_SYS_ADMIN); where that is missing the test is skipped and says why.
import { spawnSync } from 'node:child_process';
import type { TestContext } from 'node:test';
import { tempDir } from './tmp.js';

/** Mounts a tmpfs of `size` (e.g. `64k`) on a fresh folder, runs `fn` on it, unmounts it. `inodes`: how many
 * files and folders it can hold (its root included); creating one more fails with ENOSPC. */
export async function withTmpfs(t: TestContext, size: string, fn: (mount: string) => Promise<void>, options: { readOnly?: boolean; inodes?: number } = {}): Promise<void> {
  const dir = tempDir(t, 'roundload-tmpfs-');
  const flags = `size=${size},mode=0777${options.readOnly === true ? ',ro' : ''}${options.inodes === undefined ? '' : `,nr_inodes=${options.inodes}`}`;
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', flags, 'tmpfs', dir], { encoding: 'utf8', timeout: 10_000 });
  if (mounted.status !== 0) {
    t.skip(`cannot mount a tmpfs here (${(mounted.stderr || mounted.error?.message || 'not root').trim()})`);
    return;
  }
  try {
    await fn(dir);
  } finally {
    // Lazy: a file still open by a process being torn down must not leave the mount behind.
    spawnSync('umount', ['-l', dir], { timeout: 10_000 });
  }
}
