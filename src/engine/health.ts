// `GET /health` (and `/health_generate`) as SGLang answers it: a one-token generation goes through the
// server's own scheduler (with a fake bootstrap on a PD server), and the answer is 200 as soon as the scheduler
// produced any output after the check began — looked at once a second, as SGLang does — or 503 when nothing came
// within `health_timeout_s` (logged as SGLang logs it). A wedged or stalled server fails it.
import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { JobTicket } from './scheduler.js';
import type { ServerState } from './state.js';

/** SGLang sleeps a second between two looks at the scheduler's last output. */
export const HEALTH_POLL_MS = 1000;

function submitProbe(state: ServerState, markOutput: () => void): JobTicket {
  if (state.unified !== null) {
    return state.unified.submit({ promptTokens: 1, outputTokens: 1, admit: () => 1, onPrefilled: () => {}, onToken: markOutput, onFinish: () => {} });
  }
  if (state.prefill !== null) {
    return state.prefill.submit({
      rid: `HEALTH_CHECK_${Date.now() / 1000}`,
      promptTokens: 1,
      room: null,
      pinned: false,
      admit: () => 1,
      onPrefilled: () => {},
      onTransferred: markOutput,
      onFailed: () => {},
    });
  }
  return state.decode!.submit({
    rid: `HEALTH_CHECK_${Date.now() / 1000}`,
    promptTokens: 1,
    room: null,
    stallBootstrap: false,
    outputTokens: [1],
    onTransferred: () => {},
    onToken: markOutput,
    onChoiceFinish: () => {},
    onFinish: () => {},
    onFailed: () => {},
  });
}

/** Answers one health check; bounded by `health_timeout_s`. */
export function handleHealth(state: ServerState, res: ServerResponse, held: Set<NodeJS.Timeout>): void {
  const ticMs = performance.now();
  const ticEpochS = Date.now() / 1000;
  const ticket = submitProbe(state, () => {
    state.lastOutputMs = performance.now();
  });
  const deadlineMs = ticMs + state.settings.health_timeout_s * 1000;
  let timer: NodeJS.Timeout | null = null;
  const finish = (status: number): void => {
    if (timer !== null) held.delete(timer);
    timer = null;
    ticket.cancel();
    if (res.destroyed || res.writableEnded) return;
    res.writeHead(status, { 'content-length': '0' });
    res.end();
  };
  const look = (): void => {
    if (state.lastOutputMs > ticMs) return finish(200);
    if (performance.now() >= deadlineMs) {
      const lastS = state.lastOutputMs === -Infinity ? 0 : ticEpochS - (ticMs - state.lastOutputMs) / 1000;
      state.log.server(
        `Health check failed. Server couldn't get a response from detokenizer for last ${state.settings.health_timeout_s} seconds. tic start time: ${ticEpochS.toFixed(2)}. last_heartbeat time: ${lastS.toFixed(2)}`,
      );
      return finish(503);
    }
    if (timer !== null) held.delete(timer);
    timer = setTimeout(look, Math.min(HEALTH_POLL_MS, Math.max(0, deadlineMs - performance.now())));
    held.add(timer);
  };
  timer = setTimeout(look, Math.min(HEALTH_POLL_MS, state.settings.health_timeout_s * 1000));
  held.add(timer);
  res.on('close', () => {
    if (timer === null) return;
    clearTimeout(timer);
    held.delete(timer);
    timer = null;
    ticket.cancel();
  });
}
