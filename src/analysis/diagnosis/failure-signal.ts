// What the failed requests themselves say: where hung requests stopped (connect, headers, first token,
// mid-stream), and who answered an error: the proxy's own page (502/503/504: it is up and got no answer from
// the engine, read against what was seen of the engine; a 4xx page: it refused the request itself, as nginx's
// 413 for a body past client_max_body_size), the server's JSON error body, an error event inside
// the stream, or nobody (refused, reset).
import type { PathKind } from '../../types/index.js';
import type { EngineHealth } from './engine-health.js';
import type { Episode } from './episodes.js';
import { RESET_CLASSES, type ErrorSpan } from './inputs.js';
import { counted, pct, tally } from './text.js';
import { MEDIUM, STRONG, vote, WEAK, type Signal } from './votes.js';

/** Share of hangs at `connect` from which the network (or an accept queue) is the suspect. */
const CONNECT_SHARE = 0.6;

function hangVotes(ep: Episode, signal: Signal): void {
  const n = ep.hangs.length;
  const connect = ep.hangs.filter((h) => h.phase === 'connect').length;
  if (n >= 2 && connect / n >= CONNECT_SHARE) {
    signal.votes.push(vote(MEDIUM, `${connect} of ${n} hung requests never got a connection (${pct(connect / n)} at connect): packets dropped on the way, or an accept queue full`, ['network']));
  }
}

function examples(errors: readonly ErrorSpan[]): string {
  const top = counted(errors, (e) => e.detail)[0];
  return top === undefined || top[0] === '' ? '' : ` ("${top[0]}")`;
}

function statusesOf(pages: readonly ErrorSpan[]): string {
  return [...new Set(pages.map((x) => x.http_status))].sort().join(', ');
}

/** What would tell a proxy that cannot reach a healthy engine from an engine that is down. */
const TELL = 'canaries (target.bypass, a direct URL of the engine, and monitor.canary_interval_s) or the engine scraped (monitor.targets)';

/**
 * The proxy's own error pages (502/503: it got no answer from the engine, or its health checks marked it
 * down; 504: no answer in time). The page says the proxy was up and got nothing from behind it, not whose
 * fault that was; what else was seen of the engine decides. Seen failing: the engine's. Seen healthy: the
 * proxy could not reach a healthy engine (its upstream address or port, its own connection pool or health
 * checks, the network between them) — with a 504, an engine slow past the proxy's timeout fits as well. Not
 * seen: no vote, and the measurement that would tell.
 */
function pageVotes(pages: readonly ErrorSpan[], health: EngineHealth, signal: Signal): void {
  const timeouts = pages.every((x) => x.http_status === 504);
  const page = `the proxy answered ${pages.length} requests itself with an error page (HTTP ${statusesOf(pages)})${examples(pages)}: it was up, and got no answer from the engine behind it`;
  if (health.seen === 'failing') {
    signal.votes.push(vote(timeouts ? MEDIUM : STRONG, `${page}, and the engine was seen failing (${health.by})`, timeouts ? ['engine', 'engine_overloaded'] : ['engine'], ['proxy']));
  } else if (health.seen === 'healthy') {
    const between = timeouts
      ? 'the proxy timed out on an engine seen answering: its timeout shorter than the engine takes when busy, or the proxy unable to reach it in time'
      : "the proxy could not reach an engine seen answering: its upstream address or port, its own connection pool or health checks, or the network between them (the proxy's error log and a request from the proxy's host to the engine's address tell them apart)";
    // Answered scrapes alone are a hint (a metrics port can answer while the API port does not): canaries settle it.
    const settle = health.settled ? '' : `; ${TELL} would settle it`;
    signal.votes.push(vote(health.settled ? STRONG : WEAK, `${page}, while ${health.by}: ${between}${settle}`, timeouts ? ['proxy', 'engine_overloaded'] : ['proxy']));
  } else {
    signal.facts.push(`${page}: the engine down, or the proxy unable to reach a healthy one; nothing seen of the engine tells which: run ${TELL}`);
  }
}

/** What a refusal page says went wrong with the request itself. */
function refusalMeaning(status: number | null): string {
  if (status === 413) return "the request body was larger than it accepts (nginx client_max_body_size, a load balancer's body limit): the conversation outgrew the path's limit";
  if (status === 431 || status === 414) return 'the request headers or URL were larger than it accepts';
  if (status === 401 || status === 403 || status === 407) return 'it did not let the request through (authentication or an access rule)';
  return 'it refused the request before any engine saw it';
}

/**
 * A 4xx answered with a page (HTML or plain text), not an engine's JSON error: on a proxied path, the proxy
 * refused the request itself — the engine never saw it. Straight to the engine, the engine's HTTP server did.
 */
function refusalVotes(refusals: readonly ErrorSpan[], proxied: boolean, signal: Signal): void {
  const status = statusesOf(refusals);
  const main = counted(refusals, (x) => String(x.http_status))[0]?.[0] ?? '';
  const meaning = refusalMeaning(Number(main));
  if (proxied) {
    signal.votes.push(
      vote(STRONG, `the proxy refused ${refusals.length} requests itself with an error page (HTTP ${status})${examples(refusals)}: ${meaning}`, ['proxy'], ['engine', 'engine_overloaded']),
    );
  } else {
    signal.votes.push(vote(MEDIUM, `the server refused ${refusals.length} requests with an error page (HTTP ${status})${examples(refusals)}: ${meaning}`, ['engine']));
  }
}

/**
 * Connections reset on the agents' side: by the engine straight to it; through a proxy, by the proxy — which
 * resets the streams of an engine that went away as it would its own (HAProxy when its server dies): with the
 * engine seen failing, the resets are the engine's, passed on.
 */
function resetVotes(count: number, proxied: boolean, health: EngineHealth, signal: Signal): void {
  if (!proxied) signal.votes.push(vote(WEAK, `${count} connections were reset by the engine`, ['engine']));
  else if (health.seen === 'failing')
    signal.votes.push(vote(WEAK, `${count} connections were reset by the proxy while the engine was seen failing (${health.by}): a proxy resets the streams of an engine that went away`, ['engine']));
  else signal.votes.push(vote(WEAK, `${count} connections were reset by the proxy (the side roundload talks to)`, ['proxy']));
}

function errorVotes(ep: Episode, path: PathKind | null, health: EngineHealth, signal: Signal): void {
  const e = ep.errors;
  if (e.length === 0) return;
  const proxied = path !== null && path !== 'direct';
  const pages = e.filter((x) => x.answered_by === 'page' && (x.http_status ?? 0) >= 500);
  if (pages.length > 0) {
    if (proxied) pageVotes(pages, health, signal);
    else signal.votes.push(vote(WEAK, `${pages.length} requests were answered with an error page (HTTP ${statusesOf(pages)})${examples(pages)}`, ['engine']));
  }
  const refusals = e.filter((x) => x.answered_by === 'page' && (x.http_status ?? 0) >= 400 && (x.http_status ?? 0) < 500 && x.http_status !== 429);
  if (refusals.length > 0) refusalVotes(refusals, proxied, signal);
  const json5xx = e.filter((x) => x.answered_by === 'server_json' && (x.http_status ?? 0) >= 500);
  // The engine's own error body: it was up and answered, and the answer was its failure.
  if (json5xx.length > 0) signal.votes.push({ ...vote(STRONG, `the server answered ${json5xx.length} requests with its own 5xx error body${examples(json5xx)}`, ['engine']), answered: true });
  const limited = e.filter((x) => x.http_status === 429);
  if (limited.length > 0) signal.votes.push(vote(MEDIUM, `${limited.length} requests were rate limited (HTTP 429): the server was shedding load`, ['engine_overloaded']));
  const inStream = e.filter((x) => x.class === 'server_error_event');
  if (inStream.length > 0) signal.votes.push(vote(STRONG, `${inStream.length} streams carried the server's own error event${examples(inStream)}`, ['engine']));
  const refused = e.filter((x) => x.class === 'connection_refused');
  if (refused.length > 0) {
    if (proxied) signal.votes.push(vote(MEDIUM, `${refused.length} requests were refused at the proxy's address: nothing listened there`, ['proxy'], ['engine']));
    else signal.votes.push(vote(MEDIUM, `${refused.length} requests were refused at the engine's address: nothing listened there`, ['engine']));
  }
  const resets = e.filter((x) => RESET_CLASSES.has(x.class));
  if (resets.length > 0) resetVotes(resets.length, proxied, health, signal);
  const connect = e.filter((x) => x.class === 'connect_timeout' || x.class === 'dns');
  if (connect.length > 0) signal.votes.push(vote(MEDIUM, `${connect.length} requests could not connect (${tally(connect, (x) => x.class)})`, ['network']));
  const tls = e.filter((x) => x.class === 'tls');
  if (tls.length > 0) signal.votes.push(vote(MEDIUM, `${tls.length} TLS handshakes failed${examples(tls)}`, [proxied ? 'proxy' : 'engine']));
}

/** The failures' own evidence: their phase, class and error bodies; a proxy's error page read against `health`. */
export function failureSignal(ep: Episode, path: PathKind | null, health: EngineHealth): Signal {
  const signal: Signal = { votes: [], facts: [] };
  hangVotes(ep, signal);
  errorVotes(ep, path, health, signal);
  return signal;
}
