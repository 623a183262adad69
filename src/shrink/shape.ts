// A variant of a workload, as the few settings a shrink changes (agents, rounds, context, think time, one
// connection, the path), and how it is applied to the original workload and said in words. Pure.
import type { Workload } from '../config/index.js';

export interface Shape {
  agents: number;
  rounds: number;
  /** Every conversation size field is divided by this (1: as the original). */
  contextDivisor: number;
  thinkTimeMs: number;
  /** All agents share one pooled connection (`agents.connection: pool`, `pool_connections: 1`). */
  oneConnection: boolean;
  /** `target.via` removed: straight to the target. */
  direct: boolean;
}

type Conversation = Workload['conversation'];
type SizeField = 'system_prompt_tokens' | 'first_user_tokens' | 'user_turn_tokens' | 'tool_result_tokens' | 'tool_result_growth_tokens';

/** The conversation size fields a smaller context divides, each with the least the schema allows. */
const CONTEXT_FIELDS: readonly (readonly [SizeField, number])[] = [
  ['system_prompt_tokens', 0],
  ['first_user_tokens', 1],
  ['user_turn_tokens', 1],
  ['tool_result_tokens', 1],
  ['tool_result_growth_tokens', 0],
];

/** The shape of the workload as it is. */
export function shapeOf(workload: Workload): Shape {
  const { agents } = workload;
  return {
    agents: agents.count,
    rounds: agents.rounds,
    contextDivisor: 1,
    thinkTimeMs: agents.think_time_ms,
    oneConnection: agents.connection === 'pool' && agents.pool_connections === 1,
    direct: workload.target.via === null,
  };
}

/** The conversation size fields divided by `divisor`, none below its least value. */
export function scaledContext(conversation: Conversation, divisor: number): Pick<Conversation, SizeField> {
  const out = {} as Pick<Conversation, SizeField>;
  for (const [field, least] of CONTEXT_FIELDS) out[field] = Math.max(least, Math.floor(conversation[field] / divisor));
  return out;
}

/** Whether dividing by `divisor` makes any size field smaller than dividing by `divisor / 2` did. */
export function contextShrinks(conversation: Conversation, divisor: number): boolean {
  const before = scaledContext(conversation, divisor / 2);
  const after = scaledContext(conversation, divisor);
  return CONTEXT_FIELDS.some(([field]) => after[field] < before[field]);
}

/** `base` with `shape` applied: a new workload; `base` is untouched. */
export function applyShape(base: Workload, shape: Shape): Workload {
  const pooled = shape.oneConnection ? { connection: 'pool' as const, pool_connections: 1 } : {};
  return {
    ...base,
    target: shape.direct ? { ...base.target, via: null } : base.target,
    agents: { ...base.agents, count: shape.agents, rounds: shape.rounds, think_time_ms: shape.thinkTimeMs, ...pooled },
    conversation: { ...base.conversation, ...scaledContext(base.conversation, shape.contextDivisor) },
  };
}

const plural = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;

/** `1 agent × 7 rounds, context ÷4, think 0, one connection`: the shape in words (the path is said apart). */
export function describeShape(shape: Shape): string {
  const parts = [`${plural(shape.agents, 'agent')} × ${plural(shape.rounds, 'round')}`];
  parts.push(shape.contextDivisor === 1 ? 'full context' : `context ÷${shape.contextDivisor}`);
  parts.push(shape.thinkTimeMs === 0 ? 'think 0' : `think ${shape.thinkTimeMs} ms`);
  if (shape.oneConnection && shape.agents > 1) parts.push('one shared connection');
  return parts.join(', ');
}

/** The settings of a shape as shrink.json records them. */
export function shapeSettings(base: Workload, shape: Shape): Record<string, unknown> {
  const workload = applyShape(base, shape);
  return {
    agents: shape.agents,
    rounds: shape.rounds,
    context_divisor: shape.contextDivisor,
    ...scaledContext(workload.conversation, 1),
    think_time_ms: shape.thinkTimeMs,
    connection: workload.agents.connection,
    pool_connections: workload.agents.pool_connections,
    via: workload.target.via?.kind ?? null,
  };
}
