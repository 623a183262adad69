// A trace id as a link to the user's trace viewer (`tracing.trace_url`, `--trace-url`): the template's
// `{trace_id}` filled in. Checked again wherever a link is made (run.json can be edited by hand): only an
// http(s) URL and a 32-hex id make a link; the caller still escapes it for HTML.

const TRACE_ID = /^[0-9a-f]{32}$/;

/** The link to `traceId`'s trace; null when the template is not an http(s) URL or the id is not 32 hex. */
export function traceLink(template: string | null | undefined, traceId: string): string | null {
  if (typeof template !== 'string' || !template.includes('{trace_id}') || !TRACE_ID.test(traceId)) return null;
  let url: URL;
  try {
    url = new URL(template.replaceAll('{trace_id}', traceId));
  } catch {
    return null;
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
}
