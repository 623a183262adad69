// A workload written back as YAML: only what differs from the defaults (plus the name), so a file made from a
// resolved workload (run.json, a shrink) reads like one a person wrote and loads to the same workload.
import { stringify } from 'yaml';
import { workloadSchema, type Workload } from './schema.js';

type Mapping = Record<string, unknown>;

const isMapping = (value: unknown): value is Mapping => value !== null && typeof value === 'object' && !Array.isArray(value);

/** `value` less what equals `defaults`, key by key through mappings; lists and scalars are kept whole when they
 * differ. Undefined when nothing differs. */
function differences(value: unknown, defaults: unknown): unknown {
  if (isMapping(value) && isMapping(defaults)) {
    const out: Mapping = {};
    for (const [key, child] of Object.entries(value)) {
      const diff = key in defaults ? differences(child, defaults[key]) : child;
      if (diff !== undefined) Object.defineProperty(out, key, { value: diff, enumerable: true, writable: true, configurable: true });
    }
    return Object.keys(out).length === 0 ? undefined : out;
  }
  return JSON.stringify(value) === JSON.stringify(defaults) ? undefined : value;
}

/**
 * The workload as YAML text: `name`, `agents.count` and `agents.rounds`, then every field whose value is not its
 * default.
 * `parseWorkload(workloadToYaml(w), file)` gives back `w`. @param header comment lines put first (without `#`).
 */
export function workloadToYaml(workload: Workload, header: readonly string[] = []): string {
  const { name, ...rest } = workload;
  const defaults = workloadSchema.parse({});
  const changed = (differences(rest, defaults) as Mapping | undefined) ?? {};
  // The load's shape is always written, default or not: it is what a reader looks for first.
  const agents = { count: workload.agents.count, rounds: workload.agents.rounds, ...(isMapping(changed.agents) ? changed.agents : {}) };
  const { target, agents: _agents, ...others } = changed;
  const body = { name, ...(target === undefined ? {} : { target }), agents, ...others };
  const comment = header.map((line) => (line === '' ? '#' : `# ${line}`)).join('\n');
  return `${comment === '' ? '' : `${comment}\n`}${stringify(body, { lineWidth: 0 })}`;
}
