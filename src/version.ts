// roundload's own version, from the nearest package.json above this file (works from src/ and dist/).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function find(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i += 1) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) {
      const pkg = JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'roundload' && typeof pkg.version === 'string') return pkg.version;
    }
    dir = dirname(dir);
  }
  return '0.0.0';
}

export const VERSION = find();
