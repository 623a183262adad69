// Each agent request's id, the one the engine logs: `rl-<tag>-<conversation>-r<round>-<n>`, sent in
// `X-Request-Id` and, where the server takes one, in a body field (SGLang's `rid`), and kept in the record
// (`request_id`), the hang event, the diagnosis, the report and repro, so a hang is found in the engine's log.
import { randomBytes } from 'node:crypto';

/** The header every server may ignore; SGLang's HTTP layer and the embedded engine read it. */
export const PUBLIC_REQUEST_ID_HEADER = 'x-request-id';

/** Where a request's id goes: `X-Request-Id` and/or a body field (null: none). */
export interface RequestIdPlacement {
  header: boolean;
  bodyField: string | null;
}

/** Tells this process's (or worker thread's) requests apart from another's of the same run. */
const TAG = randomBytes(3).toString('hex');
let seq = 0;

/** A fresh id for a request of `conversation`'s `round`: unique in the run, readable in a log. */
export function nextPublicRequestId(conversation: string, round: number): string {
  seq += 1;
  return `rl-${TAG}-${conversation}-r${round}-${seq}`;
}

/** `body` (a JSON object's bytes) with `field: id` as its first member; unchanged when it is not an object.
 * First, so a field of the same name in `target.extra_body` (later in the text) wins. */
export function withBodyId(body: Buffer, field: string, id: string): Buffer {
  let at = 0;
  while (at < body.length && (body[at] === 0x20 || body[at] === 0x0a || body[at] === 0x0d || body[at] === 0x09)) at += 1;
  if (body[at] !== 0x7b) return body;
  const rest = body.subarray(at + 1);
  const empty = rest.toString('latin1').trimStart().startsWith('}');
  return Buffer.concat([Buffer.from(`{${JSON.stringify(field)}:${JSON.stringify(id)}${empty ? '' : ','}`), rest]);
}
