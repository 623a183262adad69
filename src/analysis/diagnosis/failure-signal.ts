// What the failed requests themselves say: where hung requests stopped (connect, headers, first token,
// mid-stream), and who answered an error: the proxy's own page (502/503/504: it is up and could not reach
// the engine), the server's JSON error body, an error event inside the stream, or nobody (refused, reset).
import type { PathKind } from '../../types/index.js';
import type { Episode } from './episodes.js';
import type { ErrorSpan } from './inputs.js';
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

function errorVotes(ep: Episode, path: PathKind | null, signal: Signal): void {
  const e = ep.errors;
  if (e.length === 0) return;
  const proxied = path !== null && path !== 'direct';
  const pages = e.filter((x) => x.answered_by === 'page' && (x.http_status ?? 0) >= 500);
  if (pages.length > 0) {
    const statuses = [...new Set(pages.map((x) => x.http_status))].sort().join(', ');
    if (proxied) {
      // 502/503 from the proxy itself: it got no answer from the engine, or its health checks marked the engine
      // down. 504: the engine did not answer in time, which a slow engine does too.
      const timeouts = pages.every((x) => x.http_status === 504);
      signal.votes.push(
        vote(
          timeouts ? MEDIUM : STRONG,
          `the proxy answered ${pages.length} requests itself with an error page (HTTP ${statuses})${examples(pages)}: it was up, and could not get an answer from the engine behind it`,
          timeouts ? ['engine', 'engine_overloaded'] : ['engine'],
          ['proxy'],
        ),
      );
    } else {
      signal.votes.push(vote(WEAK, `${pages.length} requests were answered with an error page (HTTP ${statuses})${examples(pages)}`, ['engine']));
    }
  }
  const json5xx = e.filter((x) => x.answered_by === 'server_json' && (x.http_status ?? 0) >= 500);
  if (json5xx.length > 0) signal.votes.push(vote(STRONG, `the server answered ${json5xx.length} requests with its own 5xx error body${examples(json5xx)}`, ['engine']));
  const limited = e.filter((x) => x.http_status === 429);
  if (limited.length > 0) signal.votes.push(vote(MEDIUM, `${limited.length} requests were rate limited (HTTP 429): the server was shedding load`, ['engine_overloaded']));
  const inStream = e.filter((x) => x.class === 'server_error_event');
  if (inStream.length > 0) signal.votes.push(vote(STRONG, `${inStream.length} streams carried the server's own error event${examples(inStream)}`, ['engine']));
  const refused = e.filter((x) => x.class === 'connection_refused');
  if (refused.length > 0) {
    if (proxied) signal.votes.push(vote(MEDIUM, `${refused.length} requests were refused at the proxy's address: nothing listened there`, ['proxy'], ['engine']));
    else signal.votes.push(vote(MEDIUM, `${refused.length} requests were refused at the engine's address: nothing listened there`, ['engine']));
  }
  const resets = e.filter((x) => x.class === 'connection_reset' || x.class === 'keepalive_race');
  if (resets.length > 0)
    signal.votes.push(vote(WEAK, `${resets.length} connections were reset by ${proxied ? 'the proxy (the side roundload talks to)' : 'the engine'}`, [proxied ? 'proxy' : 'engine']));
  const connect = e.filter((x) => x.class === 'connect_timeout' || x.class === 'dns');
  if (connect.length > 0) signal.votes.push(vote(MEDIUM, `${connect.length} requests could not connect (${tally(connect, (x) => x.class)})`, ['network']));
  const tls = e.filter((x) => x.class === 'tls');
  if (tls.length > 0) signal.votes.push(vote(MEDIUM, `${tls.length} TLS handshakes failed${examples(tls)}`, [proxied ? 'proxy' : 'engine']));
}

export function failureSignal(ep: Episode, path: PathKind | null): Signal {
  const signal: Signal = { votes: [], facts: [] };
  hangVotes(ep, signal);
  errorVotes(ep, path, signal);
  return signal;
}
