// repro.sh: the same sequence with curl, for a team that would rather read a shell script. The bodies are files
// beside it (bodies/NNN.json, byte-identical to repro.mjs's). curl reuses a connection only within one
// invocation, so by default it is ONE curl with a URL per request separated by `next`: one kept-alive socket,
// as in the run, but no think times (curl cannot pause between the transfers of one invocation); `--think`
// runs one curl per request with `sleep` between them instead (the gaps kept, every request on a fresh socket).
import { oneLine, shellQuote } from '../util/index.js';
import { placeholder, type ReproPlan } from './plan.js';

/** `bodies/001.json` for request `i` (0-based). */
export function bodyFile(i: number): string {
  return `bodies/${String(i + 1).padStart(3, '0')}.json`;
}

const seconds = (ms: number): string => (ms / 1000).toFixed(3);

/** The comment block under the shebang (`--help` prints it): recorded text only with its line breaks gone. */
function comments(plan: ReproPlan): string {
  const secrets = [...plan.secret_headers, ...plan.secret_body].map((s) => s.env);
  return `# repro.sh — written by ${oneLine(plan.generated_by)} (roundload repro) from the run folder ${oneLine(plan.run.folder)}.
# Replays connection ${oneLine(plan.connection ?? '(none)')} of run ${oneLine(plan.run.name)} with curl: ${plan.requests.length} requests, looking for
#   ${oneLine(plan.failure.description)}
# Bodies: bodies/NNN.json beside this script, synthetic text of the recorded sizes (the run kept no message text).
#
# curl reuses a connection only WITHIN ONE INVOCATION. So by default this makes one curl invocation with one URL per
# request, separated by "next" (in a curl config file), and every request goes out on the same kept-alive socket,
# as in the run ("connects 0" in a request's line means it reused the socket). curl cannot pause between the
# transfers of one invocation, so the run's idle gaps are NOT kept in that mode. --think keeps them instead: one
# curl per request with sleep in between, which means a fresh socket for every request. repro.mjs does both at once.
#
# Hang detection is coarser than the run's: --max-time is total_ms, and --speed-limit 1 --speed-time S (S = stall_ms
# rounded up to whole seconds) ends a transfer that got no byte for S seconds, before the headers too (curl has no
# separate headers or first-token deadline). curl exit 28 on a request = a hang.
#
# usage: sh repro.sh [--target URL] [--ca FILE] [--insecure] [--proxy URL] [--api-key-env NAME] [--think]
# The API key (Authorization: Bearer) comes from ROUNDLOAD_API_KEY, or from the variable --api-key-env names.
# Exit 1 with REPRODUCED when a request hangs or fails, 0 with NOT REPRODUCED.${
    secrets.length === 0
      ? ''
      : `
# Secret values are not in this folder: set ${secrets.join(', ')} to send them (see README.txt).`
  }
`;
}

function head(plan: ReproPlan): string {
  const block = comments(plan);
  const lines = block.split('\n').length;
  return `#!/bin/sh
${block}set -eu
DIR=$(cd "$(dirname "$0")" && pwd)
TARGET=${shellQuote(plan.target)}
CA=''
INSECURE=${plan.insecure ? 1 : 0}
PROXY=${shellQuote(plan.proxy ?? '')}
KEY_ENV=''
THINK=0
while [ $# -gt 0 ]; do
  case "$1" in
    --target) TARGET=$2; shift 2 ;;
    --ca) CA=$2; shift 2 ;;
    --insecure) INSECURE=1; shift ;;
    --proxy) PROXY=$2; shift 2 ;;
    --api-key-env) KEY_ENV=$2; shift 2 ;;
    --think) THINK=1; shift ;;
    -h|--help) sed -n '2,${lines}p' "$0"; exit 0 ;;
    *) echo "repro.sh: unknown flag $1" >&2; exit 2 ;;
  esac
done
URL="\${TARGET%/}${plan.endpoint}"
KEY=''
# The key comes from a variable the receiver names (--api-key-env) or from ROUNDLOAD_API_KEY, never from one the
# run folder names: the folder does not choose which of this machine's secrets leave it.
if [ -n "$KEY_ENV" ]; then
  KEY=$(printenv "$KEY_ENV" || true)
  if [ -z "$KEY" ]; then printf 'repro.sh: --api-key-env %s: that environment variable is not set\n' "$KEY_ENV" >&2; exit 2; fi
else
  KEY=\${ROUNDLOAD_API_KEY:-}
fi
umask 077
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# A value inside double quotes in a curl config file (or a JSON string): backslashes and quotes escaped.
q() { printf '%s' "$1" | sed 's/\\\\/\\\\\\\\/g; s/"/\\\\"/g'; }
${missingNotices(plan)}`;
}

/** One stderr line for each secret whose variable is not set (its header or body field goes without it). */
function missingNotices(plan: ReproPlan): string {
  const line = (env: string, what: string): string => `[ -n "\${${env}:-}" ] || echo ${shellQuote(`repro.sh: ${what} is secret and not sent: set ${env} to its value`)} >&2\n`;
  return [...plan.secret_headers.map((h) => line(h.env, `header ${oneLine(h.name)}`)), ...plan.secret_body.map((b) => line(b.env, `extra_body field ${oneLine(b.name)}`))].join('');
}

/** `body FILE`: the body to send. FILE itself, or a copy in $WORK with each secret field's placeholder (a JSON
 * string) replaced by its variable's value, JSON-escaped: the value never lands in this folder. */
function bodyFunction(plan: ReproPlan): string {
  if (plan.secret_body.length === 0) return '';
  const fills = plan.secret_body.map((b) => `  fill ${b.env} ${shellQuote(JSON.stringify(placeholder(b.env)))}`).join('\n');
  return `# fill VAR PLACEHOLDER: in $B, PLACEHOLDER (a JSON string) becomes VAR's value as a JSON string.
fill() {
  V=$(printenv "$1" || true)
  [ -n "$V" ] || return 0
  P=$2 V="\\"$(q "$V")\\"" awk 'BEGIN { RS = "\\001"; ORS = "" } { p = ENVIRON["P"]; out = ""; while ((i = index($0, p)) > 0) { out = out substr($0, 1, i - 1) ENVIRON["V"]; $0 = substr($0, i + length(p)) } print out $0 }' "$B" > "$WORK/fill.tmp"
  B="$WORK/$(basename "$F")"
  mv "$WORK/fill.tmp" "$B"
}
body() {
  F=$1
  B="$DIR/$1"
${fills}
  printf '%s' "$B"
}
`;
}

/** The function that writes one request's curl config section, and the run's headers. */
function sectionFunction(plan: ReproPlan): string {
  const d = plan.deadlines;
  const speedS = Math.max(1, Math.ceil(d.stall_ms / 1000));
  const headers = [
    ...Object.entries(plan.headers).map(([k, v]) => `  printf '%s\\n' "header = \\"$(q ${shellQuote(`${k}: ${v}`)})\\""`),
    ...plan.secret_headers.map((h) => `  if [ -n "\${${h.env}:-}" ]; then printf '%s\\n' "header = \\"$(q ${shellQuote(`${h.name}: `)}"$${h.env}")\\""; fi`),
  ];
  return `# section N BODYFILE TRACEPARENT: request N's transfer (the API key, when set, goes only into this temporary
# file); the run's traceparent of the request (- for none) again, so the rerun joins the run's trace.
section() {
  printf '%s\\n' "url = \\"$(q "$URL")\\""
  echo 'request = "POST"'
  echo 'no-buffer'
  echo 'silent'
  echo 'show-error'
  printf '%s\\n' "output = \\"$(q "$WORK/response-$1.txt")\\""
  echo 'connect-timeout = ${seconds(d.connect_ms)}'
  echo 'max-time = ${seconds(d.total_ms)}'
  echo 'speed-limit = 1'
  echo 'speed-time = ${speedS}'
  echo 'header = "content-type: application/json"'
  echo 'header = "accept: text/event-stream"'
  if [ "$3" != - ]; then printf '%s\\n' "header = \\"traceparent: $3\\""; fi
${headers.join('\n')}${headers.length > 0 ? '\n' : ''}  if [ -n "$KEY" ]; then printf '%s\\n' "header = \\"authorization: Bearer $(q "$KEY")\\""; fi
  if [ -n "$CA" ]; then printf '%s\\n' "cacert = \\"$(q "$CA")\\""; fi
  if [ "$INSECURE" = 1 ]; then echo 'insecure'; fi
  if [ -n "$PROXY" ]; then printf '%s\\n' "proxy = \\"$(q "$PROXY")\\""; echo 'proxytunnel'; fi
  printf '%s\\n' "data-binary = \\"@$(q ${plan.secret_body.length === 0 ? '"$DIR/$2"' : '"$(body "$2")"'})\\""
  echo "write-out = \\"repro.sh: request $1/${plan.requests.length} http %{http_code} connects %{num_connects} ttfb %{time_starttransfer}s total %{time_total}s bytes %{size_download} exit %{exitcode} %{errormsg}\\\\n\\""
}
`;
}

function sequence(plan: ReproPlan): string {
  // A traceparent is hex and dashes (pick.ts checks it), safe in the here-string and the config file.
  const lines = plan.requests.map((r, i) => `${i + 1} ${seconds(i === 0 ? 0 : r.idle_ms)} ${bodyFile(i)} ${r.traceparent ?? '-'}`);
  const failure = plan.failure.status;
  return `# request number, idle gap before it (s), body file, traceparent
REQUESTS='${lines.join('\n')}'
printf '%s\\n' "repro.sh: ${plan.requests.length} requests to $URL$([ "$THINK" = 1 ] && echo ', one curl each, gaps kept' || echo ', one curl invocation, one kept-alive socket, no gaps')"
: > "$WORK/log"
if [ "$THINK" = 1 ]; then
  echo "$REQUESTS" | while read -r n gap file tp; do
    sleep "$gap"
    section "$n" "$file" "$tp" > "$WORK/one.cfg"
    curl -K "$WORK/one.cfg" | tee -a "$WORK/log" || true
  done
else
  echo "$REQUESTS" | while read -r n gap file tp; do
    [ "$n" = 1 ] || echo 'next'
    section "$n" "$file" "$tp"
  done > "$WORK/all.cfg"
  curl -K "$WORK/all.cfg" | tee -a "$WORK/log" || true
fi
# The first request that failed: curl exit 28 (no byte for speed-time, or past max-time) is a hang, any other
# non-zero exit or an HTTP status >= 400 an error.
BAD=$(awk '$1 == "repro.sh:" && $2 == "request" { code = ""; for (i = 1; i < NF; i++) if ($i == "exit") code = $(i + 1); if (code != "0" || $5 + 0 >= 400) { print; exit } }' "$WORK/log")
if [ -z "$BAD" ]; then
  printf '%s\\n' ${shellQuote(`NOT REPRODUCED: every request ended ok; the run had ${oneLine(plan.failure.description)}`)}
  exit 0
fi
case "$BAD" in
  *"exit 28"*) KIND=hang ;;
  *) KIND=error ;;
esac
if [ "$KIND" = ${shellQuote(failure)} ]; then printf '%s\\n' "REPRODUCED ($KIND): $BAD"; else printf '%s\\n' "FAILED DIFFERENTLY ($KIND; the run had a "${shellQuote(failure)}"): $BAD"; fi
exit 1
`;
}

/** The whole of repro.sh for `plan` (its bodies are written beside it as `bodyFile(i)`). */
export function reproSh(plan: ReproPlan): string {
  return `${head(plan)}${bodyFunction(plan)}${sectionFunction(plan)}${sequence(plan)}`;
}
