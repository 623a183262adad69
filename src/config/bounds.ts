// Upper bounds no schema field may pass, checked by unit in the key's name (convention 6, docs/development.md), so a new field is
// bounded the day it is added: a `*_ms` or `*_s` time fits one Node timer, a `*tokens*` count stays small
// enough that no generated string or body can exhaust V8. Durations of a whole run (`duration`,
// `sweep.phase_duration`) are longer-lived and have their own bound (they run on chunked timers).

/** Longest delay `setTimeout` takes (2^31 − 1 ms, about 24.8 days); past it Node fires after 1 ms. */
export const MAX_TIMER_MS = 2_147_483_647;
/** Longest `duration` / `sweep.phase_duration`: a year and a day (they run on chunked timers). */
export const MAX_DURATION_MS = 366 * 86_400_000;
/** Largest token count of any field, and of the context a conversation may grow to. */
export const MAX_TOKENS = 10_000_000;
/** Most `window_s` windows a timed run may span (summary.json keeps a few figures for each). */
export const MAX_WINDOWS = 1_000_000;

type Path = readonly (string | number)[];
type AddIssue = (path: Path, message: string) => void;

/** What a zod refinement context offers (its issues so far, and a way to add one). */
interface RefineContext {
  issues: readonly { path?: readonly PropertyKey[] | undefined }[];
  addIssue(issue: { code: 'custom'; path: (string | number)[]; message: string }): void;
}

/** An AddIssue for a zod refinement that skips fields already reported (a field with a lower bound of its
 * own says so itself). */
export function refineIssues(ctx: RefineContext): AddIssue {
  return (path, message) => {
    const key = path.join('.');
    if (ctx.issues.some((issue) => (issue.path ?? []).map(String).join('.') === key)) return;
    ctx.addIssue({ code: 'custom', path: [...path], message });
  };
}

const TIMER_DAYS = (Math.floor((MAX_TIMER_MS / 86_400_000) * 10) / 10).toFixed(1);

function boundOf(key: string): { max: number; message: string } | null {
  if (/(^|_)ms$/.test(key)) return { max: MAX_TIMER_MS, message: `must be at most ${MAX_TIMER_MS} ms (${TIMER_DAYS} days, the longest timer Node can set)` };
  if (/_s$/.test(key) && !/_per_s$/.test(key)) return { max: MAX_TIMER_MS / 1000, message: `must be at most ${MAX_TIMER_MS / 1000} s (${TIMER_DAYS} days, the longest timer Node can set)` };
  if (/(^|_)tokens(_|$)/.test(key) && !/_per_s/.test(key)) return { max: MAX_TOKENS, message: `must be at most ${MAX_TOKENS.toLocaleString('en-US')} tokens` };
  return null;
}

/** Reports every number under a time or token key (at any depth, lists included) above its bound. */
export function checkBounds(value: unknown, addIssue: AddIssue, path: Path = []): void {
  if (Array.isArray(value)) {
    value.forEach((item, i) => checkBounds(item, addIssue, [...path, i]));
    return;
  }
  if (value === null || typeof value !== 'object') return;
  for (const [key, child] of Object.entries(value)) {
    if (typeof child === 'number') {
      const bound = boundOf(key);
      if (bound !== null && child > bound.max) addIssue([...path, key], `${bound.message}, got ${child}`);
    } else {
      checkBounds(child, addIssue, [...path, key]);
    }
  }
}

/** What the context-size estimate needs from a workload. */
export interface GrowthSettings {
  rounds: number;
  system_prompt_tokens: number;
  first_user_tokens: number;
  user_turn_tokens: number;
  tool_result_tokens: number;
  tool_result_growth_tokens: number;
  max_tokens: number;
  max_context_tokens: number | null;
  /** Without tools (or with `tool_choice: none`) every round adds a user turn, never a tool result. */
  tools: unknown;
  tool_choice: string;
}

/** About the largest request a conversation sends, in tokens: its last round, with one tool result or user
 * turn a round and full answers; with `max_context_tokens`, the first request to reach the cap (the
 * conversation ends after it). Stops counting past {@link MAX_TOKENS}. */
export function largestContextTokens(s: GrowthSettings): number {
  const toolResults = s.tools !== 'none' && s.tool_choice !== 'none';
  let context = s.system_prompt_tokens + s.first_user_tokens;
  for (let round = 2; round <= s.rounds; round += 1) {
    if (context > MAX_TOKENS || (s.max_context_tokens !== null && context >= s.max_context_tokens)) break;
    const toolResult = toolResults ? s.tool_result_tokens + s.tool_result_growth_tokens * (round - 2) : 0;
    context += Math.max(s.user_turn_tokens, toolResult) + s.max_tokens;
  }
  return context;
}
