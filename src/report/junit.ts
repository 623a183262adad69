// junit.xml: the run's verdict in the format every CI shows natively — one test case per threshold (and
// the always-on `ok_requests`), one for "no hangs" (always), and one for "run completed" — so a nightly
// run's failures read as test failures, with the first error of each class as their evidence.
import { describePathTimeout, type Summary } from '../analysis/index.js';

/** XML text/attribute escaping; characters XML 1.0 cannot carry at all (most C0 controls) are dropped. */
export function xmlEscape(value: unknown): string {
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- escapes whatever a cell holds, as String() prints it
  return String(value ?? '')
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')
    .replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
}

interface Case {
  classname: string;
  name: string;
  failure: { type: string; message: string; body: string } | null;
}

function hangDetail(s: Summary): { message: string; body: string } {
  const phases = Object.entries(s.hangs.by_phase)
    .sort(([, a], [, b]) => (b ?? 0) - (a ?? 0))
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  const rounds = Object.entries(s.hangs.by_round)
    .map(([k, v]) => `round ${k}: ${v}`)
    .join(', ');
  const reuse = Object.entries(s.hangs.by_connection_reuse)
    .map(([k, v]) => `nth ${k}: ${v}`)
    .join(', ');
  const message = `${s.hangs.total} request${s.hangs.total === 1 ? '' : 's'} hung${phases === '' ? '' : ` (${phases})`}`;
  const body = [
    message,
    `by round: ${rounds || 'n/a'}`,
    `by request number on the socket: ${reuse || 'n/a'}`,
    `diagnosis: ${s.diagnosis.verdict}`,
    ...pathTimeoutLines(s),
    ...s.diagnosis.evidence.map((e) => `  - ${e}`),
  ].join('\n');
  return { message, body };
}

/** The path's timeout, when the diagnosis found failures cut at one duration: the fact a CI log should show first. */
function pathTimeoutLines(s: Summary): string[] {
  const t = s.diagnosis.path_timeout;
  return t === undefined ? [] : [`timeout: ${describePathTimeout(t)}`];
}

/** The test cases of a run, in the order they are written. */
export function junitCases(s: Summary): Case[] {
  const base = `roundload.${s.run.name}`;
  const cases: Case[] = [];
  cases.push({
    classname: base,
    name: 'no hangs',
    failure: s.totals.hangs === 0 ? null : { type: 'hangs', ...hangDetail(s) },
  });
  // The first error of each class: what a CI log should show next to a failed error check.
  const firstErrors = (s.first_errors ?? []).map(
    (e) => `first ${e.class} (×${e.count})${e.http_status === null ? '' : `, HTTP ${e.http_status}`}${e.url_path === null ? '' : ` on ${e.url_path}`}: ${e.message}`,
  );
  for (const t of s.thresholds.results) {
    const estimated = t.estimated === true ? '\n(estimated: some token counts came from the text, no usage chunk)' : '';
    cases.push({
      classname: `${base}.thresholds`,
      name: t.always_on === true ? `${t.name} (always on)` : t.name,
      failure: t.ok ? null : { type: 'threshold', message: t.message, body: [`${t.message}`, `limit ${t.limit}, actual ${t.actual}${estimated}`, ...firstErrors, ...pathTimeoutLines(s)].join('\n') },
    });
  }
  // A run that did not finish (interrupted, failed, killed) did not measure what it set out to.
  cases.push({
    classname: base,
    name: 'run completed',
    failure:
      s.run.status === 'completed'
        ? null
        : { type: 'status', message: `run status is ${s.run.status}`, body: `the run ended with status ${s.run.status} after ${s.run.wall_s} s and ${s.totals.requests} requests` },
  });
  return cases;
}

/** The whole junit.xml document. */
export function renderJunit(s: Summary): string {
  const cases = junitCases(s);
  const failures = cases.filter((c) => c.failure !== null).length;
  const time = Number.isFinite(s.run.wall_s) ? s.run.wall_s.toFixed(3) : '0';
  const props: [string, string][] = [
    ['status', s.run.status],
    ['target', s.run.target],
    ['path', s.run.path],
    ['requests', String(s.totals.requests)],
    ['errors', String(s.totals.errors)],
    ['hangs', String(s.totals.hangs)],
    ...(s.diagnosis.path_timeout === undefined ? [] : [['path_timeout_s', String(s.diagnosis.path_timeout.seconds)] as [string, string]]),
    ...Object.entries(s.run.labels).map(([k, v]): [string, string] => [`label.${k}`, v]),
  ];
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="roundload" tests="${cases.length}" failures="${failures}" errors="0" time="${time}">`,
    `  <testsuite name="${xmlEscape(`roundload.${s.run.name}`)}" tests="${cases.length}" failures="${failures}" errors="0" skipped="0" time="${time}"${s.run.started_at === null ? '' : ` timestamp="${xmlEscape(s.run.started_at.replace(/\.\d+Z$/, '').replace(/Z$/, ''))}"`}>`,
    '    <properties>',
    ...props.map(([k, v]) => `      <property name="${xmlEscape(k)}" value="${xmlEscape(v)}"/>`),
    '    </properties>',
  ];
  for (const c of cases) {
    const open = `    <testcase classname="${xmlEscape(c.classname)}" name="${xmlEscape(c.name)}" time="0"`;
    if (c.failure === null) {
      lines.push(`${open}/>`);
    } else {
      lines.push(`${open}>`);
      lines.push(`      <failure type="${xmlEscape(c.failure.type)}" message="${xmlEscape(c.failure.message)}">${xmlEscape(c.failure.body)}</failure>`);
      lines.push('    </testcase>');
    }
  }
  lines.push('  </testsuite>', '</testsuites>', '');
  return lines.join('\n');
}
