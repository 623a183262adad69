// What makes two runs the same workload, so that comparing them means something: the resolved workload of
// run.json minus what may differ between arms of an A/B (the engine under test, where it is, labels,
// pass/fail limits, how results and the monitor are written). Everything that shapes the load stays.
import { createHash } from 'node:crypto';
import { isObject } from '../util/index.js';

/** Top-level workload keys left out of the identity. */
export const IGNORED_KEYS = ['name', 'labels', 'engine', 'thresholds', 'results', 'client_metrics', 'monitor'] as const;
/** `target` keys that stay in it (the rest — url, tls, via, key, headers — is where the server is and how it is
 * reached, not the load). `extra_body` changes what is asked (thinking on or off, reasoning effort); it counts
 * only when set, so runs from before it existed keep their identity. */
const TARGET_KEPT = ['model', 'extra_body'] as const;

/** The part of a resolved workload that defines the load. */
export function workloadIdentity(workload: unknown): Record<string, unknown> {
  if (!isObject(workload)) return {};
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(workload)) {
    if ((IGNORED_KEYS as readonly string[]).includes(key)) continue;
    if (key === 'target' && isObject(value)) {
      const kept = TARGET_KEPT.filter((k) => k in value && !(isObject(value[k]) && Object.keys(value[k]).length === 0));
      out.target = Object.fromEntries(kept.map((k) => [k, value[k]]));
      continue;
    }
    out[key] = value;
  }
  return out;
}

/** JSON with object keys sorted at every level, so the hash does not depend on key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isObject(value)) {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** A short hash of the identity (12 hex digits of SHA-256). */
export function workloadHash(workload: unknown): string {
  return createHash('sha256')
    .update(canonical(workloadIdentity(workload)))
    .digest('hex')
    .slice(0, 12);
}

/** Dotted paths where two identities differ, with both values, e.g. `agents.count: 4 vs 8` (at most `limit`). */
export function identityDifferences(a: unknown, b: unknown, limit = 8): string[] {
  const out: string[] = [];
  const walk = (x: unknown, y: unknown, path: string): void => {
    if (out.length >= limit) return;
    if (isObject(x) && isObject(y)) {
      for (const key of [...new Set([...Object.keys(x), ...Object.keys(y)])].sort()) walk(x[key], y[key], path === '' ? key : `${path}.${key}`);
      return;
    }
    if (canonical(x) !== canonical(y)) out.push(`${path}: ${short(x)} vs ${short(y)}`);
  };
  walk(workloadIdentity(a), workloadIdentity(b), '');
  return out;
}

function short(v: unknown): string {
  const text = v === undefined ? '(absent)' : canonical(v);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}
