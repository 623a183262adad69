// Which config file a path holds, for `roundload validate`: an ab file (`roundload ab`) has a top-level `arms:`
// or `workload:`, keys no workload has; anything else — unreadable or unparsable files too — is a workload, and
// the loader of the kind chosen reports every problem located.
import { isMap, isScalar, parseDocument } from 'yaml';
import { readConfigFile } from './load.js';

type ConfigFileKind = 'ab' | 'workload';

/** The top-level keys that make a file an ab file. */
const AB_KEYS: ReadonlySet<unknown> = new Set(['arms', 'workload']);

/** The kind of config file `text` is (see the header). */
function configKindOf(text: string): ConfigFileKind {
  const doc = parseDocument(text, { prettyErrors: false });
  const top = doc.contents;
  return isMap(top) && top.items.some((pair) => isScalar(pair.key) && AB_KEYS.has(pair.key.value)) ? 'ab' : 'workload';
}

/** The kind of config file at `file`; a file that cannot be read is a workload (its loader says why). */
export async function configFileKind(file: string): Promise<ConfigFileKind> {
  let text: string;
  try {
    text = await readConfigFile(file, 'workload');
  } catch {
    return 'workload';
  }
  return configKindOf(text);
}
