// Shards: one workload run by N processes (machines, pods), each with its share of the agents. Agent
// indices stay global (shard i of N runs agents i, i+N, i+2N…), so conversation ids and the seeded content
// derived from them are the same as in one big run and never collide between shards.
import { UsageError } from '../errors.js';

export interface Shard {
  /** 0-based, like a Kubernetes Indexed Job's JOB_COMPLETION_INDEX. */
  index: number;
  count: number;
}

/** Parses `--shard i/N` (0 ≤ i < N). @throws UsageError */
export function parseShard(text: string): Shard {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  if (m === null) throw new UsageError(`--shard must be i/N (this process's 0-based index / the number of shards), e.g. 0/4; got "${text}"`);
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (count < 1 || count > 10_000) throw new UsageError(`--shard ${text}: the number of shards must be 1 to 10000`);
  if (index >= count) throw new UsageError(`--shard ${text}: the index is 0-based, so it must be below ${count} (0/${count} … ${count - 1}/${count})`);
  return { index, count };
}

/** Global indices of the agents this shard runs out of `agents` (all of them without a shard). */
export function shardAgents(agents: number, shard: Shard | null | undefined): number[] {
  const out: number[] = [];
  const step = shard?.count ?? 1;
  for (let i = shard?.index ?? 0; i < agents; i += step) out.push(i);
  return out;
}
