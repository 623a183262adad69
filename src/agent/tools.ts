// The tools agents offer the model, and the synthetic results they "run" to, sized to grow per round.
import type { ToolSpec } from '../config/index.js';
import { filler } from './text.js';
import type { Rng } from '../util/index.js';

/** Read a file, run a command, search code: the bread and butter of coding agents. */
export const DEFAULT_TOOLS: readonly ToolSpec[] = [
  {
    name: 'read_file',
    description: 'Read a file from the workspace and return its contents.',
    parameters: { type: 'object', properties: { path: { type: 'string', description: 'Path relative to the workspace root' } }, required: ['path'] },
  },
  {
    name: 'run_command',
    description: 'Run a shell command in the workspace and return its output.',
    parameters: {
      type: 'object',
      properties: { command: { type: 'string' }, timeout_s: { type: 'integer', description: 'Seconds before the command is killed' } },
      required: ['command'],
    },
  },
  {
    name: 'search_code',
    description: 'Search the code base for a pattern and return matching lines.',
    parameters: { type: 'object', properties: { pattern: { type: 'string' }, max_results: { type: 'integer' } }, required: ['pattern'] },
  },
];

/** The `tools` field of a request, in OpenAI's shape. */
export function toolsPayload(tools: readonly ToolSpec[]): unknown[] {
  return tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } }));
}

/** The output a tool "returned": seeded text of `tokens` tokens, led by a line naming the call. */
export function toolResult(rng: Rng, name: string, tokens: number): string {
  return `[${name} exit=0]\n${filler(rng, tokens)}`;
}
