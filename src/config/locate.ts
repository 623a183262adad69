// Finds where a key path lives in the parsed YAML document, as 1-based line:col, so every error can say
// `file:line:col`. A path that is not in the file (a default, a missing parent) falls back to its nearest ancestor.
import { isAlias, isCollection, isMap, isScalar, isSeq, type Document, type LineCounter, type Node, type Pair, type YAMLMap } from 'yaml';

export interface Position {
  line: number;
  col: number;
}

type Path = readonly PropertyKey[];
const START: Position = { line: 1, col: 1 };

/** What a walk down the document reached: the deepest node, the key that led to it, and whether the whole path exists. */
interface Reached {
  node: unknown;
  keyNode: Node | undefined;
  complete: boolean;
}

function keyName(key: unknown): string | undefined {
  return isScalar(key) ? String(key.value) : undefined;
}

// A mapping's pairs by key name, built once per mapping: a file with 40k problems looks up 40k keys, and a
// scan of the mapping for each would take seconds. A repeated key (refused before validation) keeps its first.
const pairIndex = new WeakMap<YAMLMap, Map<string, Pair>>();

function pairOf(map: YAMLMap, key: string): Pair | undefined {
  let index = pairIndex.get(map);
  if (index === undefined) {
    index = new Map();
    for (const pair of map.items) {
      const name = keyName(pair.key);
      if (name !== undefined && !index.has(name)) index.set(name, pair);
    }
    pairIndex.set(map, index);
  }
  return index.get(key);
}

function resolve(doc: Document, node: unknown): unknown {
  return isAlias(node) ? node.resolve(doc) : node;
}

function walk(doc: Document, path: Path): Reached {
  let node: unknown = resolve(doc, doc.contents);
  let keyNode: Node | undefined;
  for (const segment of path) {
    if (isMap(node)) {
      const pair = pairOf(node, String(segment));
      if (pair === undefined) return { node, keyNode, complete: false };
      keyNode = isScalar(pair.key) ? pair.key : undefined;
      node = resolve(doc, pair.value);
    } else if (isSeq(node) && typeof segment === 'number') {
      const item: unknown = node.items[segment];
      if (item === undefined) return { node, keyNode, complete: false };
      keyNode = undefined;
      node = resolve(doc, item);
    } else {
      return { node, keyNode, complete: false };
    }
  }
  return { node, keyNode, complete: true };
}

function rangeStart(node: unknown): number | undefined {
  if (node === null || typeof node !== 'object' || !('range' in node)) return undefined;
  const range: unknown = node.range;
  return Array.isArray(range) && typeof range[0] === 'number' ? range[0] : undefined;
}

/** True when the document holds a node at `path` (an override may have created it instead). */
export function existsInDocument(doc: Document, path: Path): boolean {
  return walk(doc, path).complete;
}

/**
 * Position of the node at `path`; with `key`, of that key inside the mapping at `path` (unknown keys).
 * A scalar or flow value is pointed at itself (`count: four` → the `four`); a block collection or an
 * empty value at its key, which is where a reader looks.
 */
export function locate(doc: Document, lineCounter: LineCounter, path: Path, key?: string): Position {
  const reached = walk(doc, path);
  let offset: number | undefined;
  if (reached.complete && key !== undefined && isMap(reached.node)) {
    const pair = pairOf(reached.node, key);
    offset = rangeStart(pair?.key) ?? rangeStart(reached.node);
  } else if (reached.complete) {
    const { node } = reached;
    const pointAtValue = (isScalar(node) && node.source !== '' && node.value !== null) || (isCollection(node) && node.flow === true);
    offset = pointAtValue ? rangeStart(node) : rangeStart(reached.keyNode ?? node);
  } else {
    offset = rangeStart(reached.keyNode ?? reached.node);
  }
  return offset === undefined ? START : lineCounter.linePos(offset);
}

/** Line and column of a byte offset (for YAML syntax errors). */
export function positionOf(lineCounter: LineCounter, offset: number | undefined): Position {
  return offset === undefined ? START : lineCounter.linePos(offset);
}
