// A close that cannot hang: every shutdown step starts at once, and the close resolves when the server says
// it closed or when the bound runs out, whichever comes first, its clean-up run exactly once.
/**
 * Runs `start` (which calls `finish` once the server closed) and resolves at `finish` or after `boundMs`,
 * running `cleanup` just before. The bound's timer never keeps the process alive.
 */
export function closeWithin(boundMs: number, start: (finish: () => void) => void, cleanup: () => void): Promise<void> {
  return new Promise<void>((done) => {
    let finished = false;
    const finish = (): void => {
      if (finished) return;
      finished = true;
      clearTimeout(bound);
      cleanup();
      done();
    };
    const bound = setTimeout(finish, boundMs);
    bound.unref();
    start(finish);
  });
}
