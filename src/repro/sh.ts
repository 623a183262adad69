// repro.sh: the same sequence with curl, for a team that would rather read a shell script. The bodies are files
// beside it (bodies/NNN.json, byte-identical to repro.mjs's). curl reuses a connection only within one
// invocation, so by default it is ONE curl with a URL per request separated by `next`: one kept-alive socket,
// as in the run, but no think times (curl cannot pause between the transfers of one invocation); `--think`
// runs one curl per request with `sleep` between them instead (the gaps kept, every request on a fresh socket).
import type { ReproPlan } from './plan.js';

/** `bodies/001.json` for request `i` (0-based). */
export function bodyFile(i: number): string {
  return `bodies/${String(i + 1).padStart(3, '0')}.json`;
}

/** Single-quoted for sh (a `'` inside becomes `'\''`). */
function shq(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

const seconds = (ms: number): string => (ms / 1000).toFixed(3);

function head(plan: ReproPlan): string {
  return `#!/bin/sh
# repro.sh — written by ${plan.generated_by} (roundload repro) from the run folder ${plan.run.folder}.
# Replays connection ${plan.connection ?? '(none)'} of run ${plan.run.name} with curl: ${plan.requests.length} requests, looking for
#   ${plan.failure.description}
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
# Exit 1 with REPRODUCED when a request hangs or fails, 0 with NOT REPRODUCED.
set -eu
DIR=$(cd "$(dirname "$0")" && pwd)
TARGET=${shq(plan.target)}
CA=''
INSECURE=${plan.insecure ? 1 : 0}
PROXY=${shq(plan.proxy ?? '')}
KEY_ENV=${shq(plan.api_key_env ?? '')}
THINK=0
while [ $# -gt 0 ]; do
  case "$1" in
    --target) TARGET=$2; shift 2 ;;
    --ca) CA=$2; shift 2 ;;
    --insecure) INSECURE=1; shift ;;
    --proxy) PROXY=$2; shift 2 ;;
    --api-key-env) KEY_ENV=$2; shift 2 ;;
    --think) THINK=1; shift ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "repro.sh: unknown flag $1" >&2; exit 2 ;;
  esac
done
URL="\${TARGET%/}${plan.endpoint}"
KEY=''
if [ -n "$KEY_ENV" ]; then KEY=$(printenv "$KEY_ENV" || true); fi
umask 077
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# A value inside double quotes in a curl config file: backslashes and quotes escaped.
q() { printf '%s' "$1" | sed 's/\\\\/\\\\\\\\/g; s/"/\\\\"/g'; }
`;
}

/** The function that writes one request's curl config section, and the run's headers. */
function sectionFunction(plan: ReproPlan): string {
  const d = plan.deadlines;
  const speedS = Math.max(1, Math.ceil(d.stall_ms / 1000));
  const headers = Object.entries(plan.headers).map(([k, v]) => `  echo "header = \\"$(q ${shq(`${k}: ${v}`)})\\""`);
  return `# section N BODYFILE: request N's transfer (the API key, when set, goes only into this temporary file).
section() {
  echo "url = \\"$(q "$URL")\\""
  echo 'request = "POST"'
  echo 'no-buffer'
  echo 'silent'
  echo 'show-error'
  echo "output = \\"$(q "$WORK/response-$1.txt")\\""
  echo 'connect-timeout = ${seconds(d.connect_ms)}'
  echo 'max-time = ${seconds(d.total_ms)}'
  echo 'speed-limit = 1'
  echo 'speed-time = ${speedS}'
  echo 'header = "content-type: application/json"'
  echo 'header = "accept: text/event-stream"'
${headers.join('\n')}${headers.length > 0 ? '\n' : ''}  if [ -n "$KEY" ]; then echo "header = \\"authorization: Bearer $(q "$KEY")\\""; fi
  if [ -n "$CA" ]; then echo "cacert = \\"$(q "$CA")\\""; fi
  if [ "$INSECURE" = 1 ]; then echo 'insecure'; fi
  if [ -n "$PROXY" ]; then echo "proxy = \\"$(q "$PROXY")\\""; echo 'proxytunnel'; fi
  echo "data-binary = \\"@$(q "$DIR/$2")\\""
  echo "write-out = \\"repro.sh: request $1/${plan.requests.length} http %{http_code} connects %{num_connects} ttfb %{time_starttransfer}s total %{time_total}s bytes %{size_download} exit %{exitcode} %{errormsg}\\\\n\\""
}
`;
}

function sequence(plan: ReproPlan): string {
  const lines = plan.requests.map((r, i) => `${i + 1} ${seconds(i === 0 ? 0 : r.idle_ms)} ${bodyFile(i)}`);
  const failure = plan.failure.status;
  return `# request number, idle gap before it (s), body file
REQUESTS='${lines.join('\n')}'
echo "repro.sh: ${plan.requests.length} requests to $URL$([ "$THINK" = 1 ] && echo ', one curl each, gaps kept' || echo ', one curl invocation, one kept-alive socket, no gaps')"
: > "$WORK/log"
if [ "$THINK" = 1 ]; then
  echo "$REQUESTS" | while read -r n gap file; do
    sleep "$gap"
    section "$n" "$file" > "$WORK/one.cfg"
    curl -K "$WORK/one.cfg" | tee -a "$WORK/log" || true
  done
else
  echo "$REQUESTS" | while read -r n gap file; do
    [ "$n" = 1 ] || echo 'next'
    section "$n" "$file"
  done > "$WORK/all.cfg"
  curl -K "$WORK/all.cfg" | tee -a "$WORK/log" || true
fi
# The first request that failed: curl exit 28 (no byte for speed-time, or past max-time) is a hang, any other
# non-zero exit or an HTTP status >= 400 an error.
BAD=$(awk '$1 == "repro.sh:" && $2 == "request" { code = ""; for (i = 1; i < NF; i++) if ($i == "exit") code = $(i + 1); if (code != "0" || $5 + 0 >= 400) { print; exit } }' "$WORK/log")
if [ -z "$BAD" ]; then
  echo "NOT REPRODUCED: every request ended ok; the run had ${plan.failure.description.replace(/[`"$\\]/g, '')}"
  exit 0
fi
case "$BAD" in
  *"exit 28"*) KIND=hang ;;
  *) KIND=error ;;
esac
if [ "$KIND" = ${failure} ]; then echo "REPRODUCED ($KIND): $BAD"; else echo "FAILED DIFFERENTLY ($KIND; the run had a ${failure}): $BAD"; fi
exit 1
`;
}

/** The whole of repro.sh for `plan` (its bodies are written beside it as `bodyFile(i)`). */
export function reproSh(plan: ReproPlan): string {
  return `${head(plan)}${sectionFunction(plan)}${sequence(plan)}`;
}
