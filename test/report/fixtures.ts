// Fixtures for report and rebuild tests: request records, scrapes, and a results folder written by hand
// (as a killed or finished run would have left it).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { GaugeSample, RequestRecord, ScrapeEvent } from '../../src/types/index.js';

export function record(over: Partial<RequestRecord> = {}): RequestRecord {
  return {
    t: '2026-01-01T00:00:00.000Z',
    run_ms: 0,
    agent: 0,
    conversation: 'a0-c1',
    round: 1,
    phase: 'main',
    path: 'direct',
    status: 'ok',
    http_status: 200,
    headers_ms: 5,
    ttft_ms: 20,
    e2e_ms: 220,
    server_ttft_ms: null,
    itl: { count: 10, mean_ms: 20, p50_ms: 20, p99_ms: 30, max_ms: 30 },
    chunks: 12,
    bytes: 2000,
    request_bytes: 5000,
    prompt_tokens: 1000,
    completion_tokens: 11,
    cached_tokens: 500,
    tokens_estimated: false,
    finish_reason: 'stop',
    tool_calls: [],
    content_chars: 40,
    reasoning_chars: 0,
    error: null,
    hang: null,
    connection: { id: 'c1', nth: 1, local_port: 5000, age_ms: 0, idle_ms: null, tls: null },
    ...over,
  };
}

/** A request with round figures and no per-request detail (no ITL, no connection): ttft 100 ms, e2e 1 s, 50
 * completion tokens of 100 prompt tokens, none cached. */
export function plainRecord(over: Partial<RequestRecord> = {}): RequestRecord {
  return record({
    t: '2025-01-01T00:00:00.000Z',
    ttft_ms: 100,
    e2e_ms: 1000,
    itl: null,
    chunks: 10,
    bytes: 1000,
    request_bytes: 100,
    prompt_tokens: 100,
    completion_tokens: 50,
    cached_tokens: 0,
    content_chars: 100,
    connection: null,
    ...over,
  });
}

export function hangRecord(over: Partial<RequestRecord> = {}): RequestRecord {
  return record({
    status: 'hang',
    ttft_ms: 20,
    e2e_ms: 1000,
    completion_tokens: null,
    hang: { phase: 'mid_stream', deadline: 'stall_ms', deadline_ms: 500, last_byte_age_ms: 500 },
    connection: { id: 'c2', nth: 3, local_port: 5001, age_ms: 4000, idle_ms: 110, tls: null },
    ...over,
  });
}

export function scrape(runMs: number, samples: GaugeSample[], over: Partial<ScrapeEvent> = {}): ScrapeEvent {
  return {
    kind: 'scrape',
    t: new Date(Date.parse('2026-01-01T00:00:00.000Z') + runMs).toISOString(),
    run_ms: runMs,
    target: 'engine',
    url: 'http://127.0.0.1:1/metrics',
    duration_ms: 2,
    ok: true,
    error: null,
    burst: false,
    samples,
    ...over,
  };
}

export function gauge(name: string, value: number, labels: Record<string, string> = {}): GaugeSample {
  return { name, labels, value };
}

export interface FolderSpec {
  status?: string;
  endedAt?: string | null;
  records?: RequestRecord[];
  events?: unknown[];
  scrapes?: ScrapeEvent[];
  /** Raw text appended to requests.jsonl after the records (a torn line, say). */
  requestsTail?: string;
  workload?: Record<string, unknown>;
}

/** A results folder as a run would leave it (run.json, requests/events/gauges.jsonl; no summary). */
export function writeFolder(dir: string, spec: FolderSpec = {}): string {
  mkdirSync(dir, { recursive: true });
  const manifest = {
    schema_version: 1,
    name: 'fixture',
    status: spec.status ?? 'running',
    started_at: '2026-01-01T00:00:00.000Z',
    ended_at: spec.endedAt ?? null,
    argv: ['run', 'fixture.yaml'],
    labels: { arm: 'a' },
    target: { url: 'http://127.0.0.1:1', embedded: true, model: 'm', tls_insecure: false },
    path: 'direct',
    versions: { roundload: '0.0.0', node: process.version },
    host: { hostname: 'h', platform: 'linux', cpus: 2 },
    workload: spec.workload ?? { name: 'fixture', window_s: 10, agents: { count: 2, rounds: 3 } },
  };
  writeFileSync(join(dir, 'run.json'), JSON.stringify(manifest, null, 2));
  const lines = (xs: unknown[]) => xs.map((x) => `${JSON.stringify(x)}\n`).join('');
  writeFileSync(join(dir, 'requests.jsonl'), lines(spec.records ?? []) + (spec.requestsTail ?? ''));
  writeFileSync(join(dir, 'events.jsonl'), lines(spec.events ?? []));
  writeFileSync(join(dir, 'gauges.jsonl'), lines(spec.scrapes ?? []));
  return dir;
}
