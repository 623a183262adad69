// Who holds a history locked: /proc/locks lines read as SQLite's locks (by the byte each one takes), for the
// file's device and inode only, the strongest lock of each process, waiters left out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeHolders, parseLockHolders } from '../../src/history/locks.js';

const FILE = { major: 0, minor: 0x2f, inode: 1234n };

test('a RESERVED byte under write lock is an open write transaction; the shared range under write lock is EXCLUSIVE; a read lock there is SHARED', () => {
  const text = [
    '1: POSIX  ADVISORY  WRITE 4242 00:2f:1234 1073741825 1073741825',
    '2: POSIX  ADVISORY  READ 4242 00:2f:1234 1073741826 1073742335',
    '3: POSIX  ADVISORY  WRITE 5151 00:2f:1234 1073741826 1073742335',
    '4: POSIX  ADVISORY  READ 6161 00:2f:1234 1073741826 1073742335',
    '5: POSIX  ADVISORY  WRITE 7171 00:2f:1234 1073741824 1073741824',
  ].join('\n');
  assert.deepEqual(parseLockHolders(text, FILE), [
    { pid: 4242, lock: 'reserved' },
    { pid: 5151, lock: 'exclusive' },
    { pid: 6161, lock: 'shared' },
    { pid: 7171, lock: 'pending' },
  ]);
});

test('locks on another file, another device, waiters, flock and OFD locks, and ranges SQLite does not use are left out', () => {
  const text = [
    '1: POSIX  ADVISORY  WRITE 4242 00:2f:999 1073741825 1073741825',
    '2: POSIX  ADVISORY  WRITE 4242 fd:00:1234 1073741825 1073741825',
    '3: -> POSIX  ADVISORY  WRITE 4343 00:2f:1234 1073741825 1073741825',
    '4: FLOCK  ADVISORY  WRITE 4444 00:2f:1234 0 EOF',
    '5: OFDLCK ADVISORY  WRITE -1 00:2f:1234 1073741825 1073741825',
    '6: POSIX  ADVISORY  WRITE 4545 00:2f:1234 0 100',
    '',
  ].join('\n');
  assert.deepEqual(parseLockHolders(text, FILE), []);
});

test('holders in words name the strongest lock first; nobody known is null', () => {
  assert.equal(describeHolders([]), null);
  const words = describeHolders([
    { pid: 2147483000, lock: 'shared' },
    { pid: 2147483001, lock: 'exclusive' },
  ]);
  assert.equal(words, 'process 2147483001 is writing it (EXCLUSIVE lock), and process 2147483000 is reading it (SHARED lock)');
});
