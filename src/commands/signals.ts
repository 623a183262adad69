// Ctrl-C, SIGTERM and a dead parent for long commands: the first one aborts `stop` (the command winds down and
// writes its results), a second signal exits at once with 130. A parent that dies without signalling (npx
// killed by a supervisor, a terminal gone) leaves roundload re-parented: the watch sees `process.ppid` change
// and stops the run as on SIGTERM. Returns the function that removes the handlers.

/** How often the parent is checked: one cheap system call a second. */
export const PARENT_POLL_MS = 1000;

export interface StopOptions {
  /** @default PARENT_POLL_MS */
  parentPollMs?: number;
}

/** Output errors (EPIPE once the reader is gone) are dropped: the results folder is what matters then. */
function ignoreOutputError(): void {}

export function stopOnSignals(stop: AbortController, firstNotice: (signal: NodeJS.Signals) => string, options: StopOptions = {}): () => void {
  let signals = 0;
  const notice = (line: string): void => {
    process.stderr.write(`\n${line}\n`);
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    signals += 1;
    if (signals > 1) {
      notice(`${signal} again: exiting now, results may be incomplete`);
      process.exit(130);
    }
    notice(firstNotice(signal));
    stop.abort();
  };
  // The terminal or pipe we print to may be gone with the parent: a failed write must not end the run
  // before its results are written (Node ignores SIGPIPE, so a write to a closed pipe is an EPIPE error).
  for (const stream of [process.stdout, process.stderr]) if (!stream.listeners('error').includes(ignoreOutputError)) stream.on('error', ignoreOutputError);
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent || stop.signal.aborted) return;
    clearInterval(watch);
    signals += 1;
    notice(`parent process ${parent} exited (roundload is now a child of ${process.ppid}): ${firstNotice('SIGTERM')}`);
    stop.abort();
  }, options.parentPollMs ?? PARENT_POLL_MS);
  watch.unref();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return () => {
    clearInterval(watch);
    // The error listeners stay: the summary is printed after this, possibly to a closed pipe.
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
}
