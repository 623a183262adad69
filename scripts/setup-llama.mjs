// `npm run setup:llama`: node-llama-cpp (llama.cpp's own tokenizer and chat templates) with the prebuilt CPU
// binary of this platform only, into node_modules/.cache/roundload-llama, for the tests that replay against a
// real tokenizer (test/e2e/replay-template.test.ts, through test/helpers/gguf-chat.ts; they skip, saying so,
// without it). It is not a devDependency: with every GPU build it pulls (CUDA, Vulkan) it made a fresh `npm ci`
// about 960 MB. `npm ci` empties node_modules, this folder with it: run this again after one. .ci/run does.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import process from 'node:process';

/** The release whose prebuilt linux-x64 binary installs and loads here (newer ones may not). */
const VERSION = '3.21.1';
/** test/helpers/gguf-chat.ts looks here. */
const DIR = resolve('node_modules/.cache/roundload-llama');

/** `@node-llama-cpp/linux-x64`: the package holding this platform's CPU (or Metal) binary, or null. */
function binaryPackage() {
  const os = { linux: 'linux', darwin: 'mac', win32: 'win' }[process.platform];
  if (os === undefined) return null;
  return `@node-llama-cpp/${os}-${process.arch}${os === 'mac' && process.arch === 'arm64' ? '-metal' : ''}`;
}

const binary = binaryPackage();
const packages = [`node-llama-cpp@${VERSION}`, ...(binary === null ? [] : [`${binary}@${VERSION}`])];
mkdirSync(DIR, { recursive: true });
writeFileSync(join(DIR, 'package.json'), `${JSON.stringify({ private: true, description: 'npm run setup:llama (scripts/setup-llama.mjs)' }, null, 2)}\n`);
// The npm that runs this script (npm_execpath), else the one on PATH. Optional packages left out (the GPU builds),
// and install scripts: node-llama-cpp's would look for a GPU and try to build llama.cpp.
const npm = process.env.npm_execpath?.endsWith('.js') === true ? [process.execPath, process.env.npm_execpath] : ['npm'];
const args = ['install', '--prefix', DIR, '--no-save', '--no-package-lock', '--omit=optional', '--ignore-scripts', '--no-audit', '--no-fund', ...packages];
process.stderr.write(`setup:llama: ${['npm', ...args].join(' ')}\n`);
const install = spawnSync(npm[0], [...npm.slice(1), ...args], { stdio: 'inherit', shell: process.platform === 'win32' });
if (install.status !== 0) {
  process.stderr.write(`setup:llama: npm install failed (exit ${install.status ?? install.signal})\n`);
  process.exit(1);
}

// Proof that it loads: the binary, without building or a GPU, as the tests load it.
const { getLlama } = await import(pathToFileURL(join(DIR, 'node_modules/node-llama-cpp/dist/index.js')).href);
try {
  const llama = await getLlama({ gpu: false, build: 'never' });
  await llama.dispose();
} catch (error) {
  process.stderr.write(
    `setup:llama: node-llama-cpp installed in ${DIR} but its binary does not load here (${binary ?? `no prebuilt binary for ${process.platform}-${process.arch}`}): ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
}
process.stderr.write(`setup:llama: node-llama-cpp ${VERSION} ready in ${DIR}; the real-tokenizer tests run\n`);
