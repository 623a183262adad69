// README.txt of a reproducer folder: what it reproduces, how to run each script, and what it leaves out.
import { oneLine, shellQuote } from '../util/index.js';
import type { ReproPlan } from './plan.js';

function sequenceTable(plan: ReproPlan): string[] {
  return plan.requests.map(
    (r, i) =>
      `  ${String(i + 1).padStart(3)}  nth ${String(r.nth).padStart(3)}  ${oneLine(r.conversation)} round ${r.round}  ${String(r.bytes).padStart(8)} B  idle before ${String(i === 0 ? 0 : r.idle_ms).padStart(6)} ms  run: ${r.status}${r.ttft_ms === null ? '' : `, ttft ${Math.round(r.ttft_ms)} ms`}`,
  );
}

export function reproReadme(plan: ReproPlan): string {
  const d = plan.deadlines;
  const f = plan.failure;
  const secrets = [...plan.secret_headers.map((h) => `header ${oneLine(h.name)}`), ...plan.secret_body.map((b) => `extra_body field ${oneLine(b.name)}`)];
  const vars = [...plan.secret_headers, ...plan.secret_body].map((s) => `      ${s.env}`);
  const secretsText =
    secrets.length === 0
      ? ''
      : `
SECRET VALUES
  The run sent values this folder does not hold (${secrets.join('; ')}). Both scripts read them from these
  environment variables, and leave out the header (or send the placeholder) when one is not set:
${vars.join('\n')}
  A header's variable holds its value; a body field's holds the string to send (each body has the placeholder
  "\${NAME}" where the value was, and the scripts put the value there as a JSON string, in memory or in a
  temporary file). With a secret in a body, the body sizes differ from the run's by the value's length.
`;
  const id = f.request_id;
  const engineLog =
    id === null
      ? ''
      : `
THE ENGINE'S LOG
  The run sent the failed request with the id ${JSON.stringify(id)} (X-Request-Id, and the body's rid where the
  server takes one): the engine's log names it, e.g. grep -F ${shellQuote(id)} ENGINE_LOG
`;
  const replayed = plan.run.replayed_trace ? "\n- the run replayed a trace: the body fields (tools, max_tokens) are the workload's, not the trace's per request" : '';
  return `Reproducer of a failure in roundload run "${oneLine(plan.run.name)}" (${oneLine(plan.run.folder)}, started ${oneLine(plan.run.started_at ?? 'unknown')}, status ${oneLine(plan.run.status)})
Written by ${plan.generated_by}: roundload repro.

WHAT IT REPRODUCES
  ${oneLine(f.description)}
  ${oneLine(plan.diagnosis ?? 'diagnosis: none (the run has no summary.json)')}
  path: ${oneLine(plan.run.path)}; target: ${oneLine(plan.target)}${plan.proxy === null ? '' : `; CONNECT proxy ${oneLine(plan.proxy)}`}
${engineLog}
It sends again the ${plan.requests.length} requests the run sent on that socket, in order, on ONE kept-alive
connection, with the recorded body sizes, the idle gaps between them, the same model and request fields
(stream, max_tokens, tools, extra_body), and watches each with the run's deadlines:
  connect_ms ${d.connect_ms}, headers_ms ${d.headers_ms}, first_token_ms ${d.first_token_ms}, stall_ms ${d.stall_ms}, total_ms ${d.total_ms}

  req  socket   conversation      body            idle gap before it      in the run
${sequenceTable(plan).join('\n')}

HOW TO RUN
  node repro.mjs --target ${shellQuote(plan.target)}   (Node >= 18, nothing to install)
      --ca FILE | --insecure     TLS trust for an https target; --servername NAME for SNI
      --proxy URL                through an HTTP CONNECT proxy
      --api-key-env NAME         send Authorization: Bearer $NAME (without it: $ROUNDLOAD_API_KEY, when set)
      --times N                  repeat the sequence N times, each on a fresh socket
      --max-time SECONDS         bound the whole script
    One line per request; then exit 1 with "REPRODUCED: ..." (or "FAILED DIFFERENTLY: ..."), or exit 0 with
    "NOT REPRODUCED: ...". Exit 2: bad flags, or the target could not be reached at all.
  sh repro.sh --target ${shellQuote(plan.target)}   (curl; same flags but --times/--max-time, plus --think)
    One curl invocation with one URL per request (separated by "next"), so the socket is reused as in the
    run; curl cannot pause between them, so the idle gaps are dropped. --think keeps the gaps (sleep) but then
    every request is its own curl and its own socket. curl exit 28 on a request means it hung.

WHAT IT DOES NOT INCLUDE
- message text: the run kept none, so every body is synthetic text of the recorded size (bodies/NNN.json,
  the same bytes repro.mjs sends). Prompt token counts on the server differ from the run's by its tokenizer.
- the rest of the load: the other agents and connections of the run are not replayed; a failure that needs
  the engine busy may need several copies at once (e.g. for i in 1 2 3 4; do node repro.mjs & done; wait).
- the model's answers: an assistant turn is synthetic text of the recorded answer's size, not what the model
  said; tool calls in the history are not reconstructed.
- API keys and secrets: none is written here. Nor does this folder choose which of your environment
  variables is sent: the scripts send an API key (Authorization: Bearer) only from ROUNDLOAD_API_KEY, or from
  the variable you name with --api-key-env NAME, never from one named in the run folder. See SECRET VALUES for
  the other secrets.${replayed}
${secretsText}`;
}
