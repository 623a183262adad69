// Ctrl-C and SIGTERM for long commands: the first signal aborts `stop` (the command winds down and writes its
// results), a second one exits at once with 130. Returns the function that removes the handlers.
export function stopOnSignals(stop: AbortController, firstNotice: (signal: NodeJS.Signals) => string): () => void {
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    signals += 1;
    if (signals > 1) {
      process.stderr.write(`\n${signal} again: exiting now, results may be incomplete\n`);
      process.exit(130);
    }
    process.stderr.write(`\n${firstNotice(signal)}\n`);
    stop.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
}
