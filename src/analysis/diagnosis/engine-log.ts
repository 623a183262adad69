// The engine's own words: SGLang's watchdog and timeout lines found in what the probes read (a grep of the
// engine's logs, journalctl, kubectl logs). A force-failed or timed-out request in the log is the engine
// saying it held one; their absence while a request was held past its time is said too.
import type { ProbeEvent } from '../../types/index.js';
import type { Context } from './context.js';
import type { Episode } from './episodes.js';
import type { EngineLogLine, ProbeRead } from './inputs.js';
import { s1 } from './text.js';
import { STRONG, vote, type Signal } from './votes.js';

/** SGLang's lines for a request it gave up on, with sources in shared/reference/sglang-detailed.md. */
const KNOWN_LINES: readonly { pattern: RegExp; meaning: string; where: string }[] = [
  {
    pattern: /Prefill inflight request timed out.*force-failing/,
    where: "prefill's inflight queue (KV transfer to decode)",
    meaning: "SGLang's prefill inflight watchdog (SGLANG_DSV4_PREFILL_INFLIGHT_TIMEOUT) force-failed a request stuck in KV transfer",
  },
  {
    pattern: /timed out after [\d.]+s in KVPoll\.Bootstrapping|Prefill bootstrap failed/,
    where: "prefill's bootstrap queue (the prefill/decode handshake)",
    meaning: "SGLang's bootstrap timeout (SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT) failed a request whose prefill and decode never completed their handshake",
  },
  {
    pattern: /timed out after [\d.]+s in KVPoll\.(WaitingForInput|Transferring)/,
    where: 'PD hand-off (KV transfer between prefill and decode)',
    meaning: 'SGLang gave up on a KV transfer between prefill and decode (a request stuck in the hand-off)',
  },
];
/** Lines of one kind kept per probe run, and probe runs kept per run. */
const LINES_PER_KIND = 1;
export const MAX_PROBE_READS = 200;

/** The known lines in one probe's output (stdout and stderr). */
export function probeRead(e: Pick<ProbeEvent, 'run_ms' | 'name' | 'stdout' | 'stderr'>): ProbeRead {
  const lines: EngineLogLine[] = [];
  const text = `${e.stdout}\n${e.stderr}`.split('\n');
  for (const known of KNOWN_LINES) {
    let found = 0;
    for (const line of text) {
      if (found >= LINES_PER_KIND || !known.pattern.test(line)) continue;
      // Say a line once under the first kind it matches.
      if (lines.some((l) => l.text === line.trim())) continue;
      lines.push({ run_ms: e.run_ms, probe: e.name, text: line.trim().slice(0, 300), meaning: known.meaning, where: known.where });
      found += 1;
    }
  }
  return { run_ms: e.run_ms, name: e.name, lines };
}

/**
 * Over an episode: the known lines probes found from its start on (the engine's own word: a strong vote for
 * the engine); with a request held in a queue and probes that read after it went in but found none, that the
 * watchdogs did not fire.
 */
export function engineLogSignal(ep: Episode, ctx: Context, held: boolean): Signal {
  const signal = engineLogVotes(ep, ctx, held);
  const named = ep.hangs.filter((h) => h.request_id !== null);
  const ids = named.map((h) => h.request_id);
  if (ids.length > 0) {
    // With its trace id: its trace in Jaeger or Tempo, the engine's spans under it (docs/tracing.md).
    const shown = named.slice(0, MAX_IDS_NAMED).map((h) => `${JSON.stringify(h.request_id)}${h.trace_id == null ? '' : ` (trace ${h.trace_id})`}`);
    const more = ids.length > MAX_IDS_NAMED ? ` and ${ids.length - MAX_IDS_NAMED} more` : '';
    signal.facts.push(`the hung request${ids.length === 1 ? '' : 's'} went out as ${shown.join(', ')}${more}: the engine's log names each by that id (SGLang's rid)`);
  }
  return signal;
}

/** Hung requests named by id in the diagnosis, per episode. */
const MAX_IDS_NAMED = 3;

function engineLogVotes(ep: Episode, ctx: Context, held: boolean): Signal {
  const signal: Signal = { votes: [], facts: [] };
  const after = ctx.probes.filter((p) => p.run_ms >= ep.from_ms);
  const lines = after.flatMap((p) => p.lines);
  const meanings = [...new Set(lines.map((l) => l.meaning))];
  for (const meaning of meanings) {
    const first = lines.find((l) => l.meaning === meaning)!;
    // The engine saying it held a request and gave up on it: alive, and yet the culprit.
    signal.votes.push({
      ...vote(STRONG, `the engine's log says so: ${meaning} (probe ${first.probe} at ${s1(first.run_ms)}: "${first.text}")`, ['engine'], ['proxy', 'network', 'engine_overloaded']),
      holds: first.where,
    });
  }
  if (!held || meanings.length > 0) return signal;
  if (after.length > 0) {
    const last = after.at(-1)!;
    signal.facts.push(
      `the probes read the engine's logs ${after.length} time${after.length === 1 ? '' : 's'} after the request went in (last: ${last.name} at ${s1(last.run_ms)}) and found no watchdog or timeout line: SGLang's inflight watchdog (SGLANG_DSV4_PREFILL_INFLIGHT_TIMEOUT, off unless set) and bootstrap timeout did not fire`,
    );
  } else {
    signal.facts.push(`no probe read the engine's logs after the request went in: add one (monitor.probes, on: [hang, end]) that greps them for "timed out" to see whether SGLang's watchdogs fired`);
  }
  return signal;
}
