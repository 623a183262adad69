// The parts of undici roundload uses, loaded alone. undici's index also loads fetch, WebSocket, EventSource,
// cookies, caches, mocks and interceptors: about 0.12 CPU-s of every run's start (issue 26). These are undici 7's
// own files (its package.json has no `exports`), pinned by package-lock.json; test/transport/undici.test.ts checks
// they are the very classes the index exports, so an upgrade that moves them fails there, not in a run.
import { createRequire } from 'node:module';
import diagnostics from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import type * as Undici from 'undici';

const require = createRequire(import.meta.url);

/** V8's budget before a WebAssembly function is recompiled by its optimizing compiler (TurboFan), as a rough
 * count of bytes executed; V8's default is 1,800,000. undici's HTTP parser (llhttp) is WebAssembly, and its
 * state machine is one 34 KB function that used up the default budget within the first response: its TurboFan
 * compile (0.2-0.27 CPU-s on a V8 thread: `--trace-wasm-compilation-times`) was a quarter of a 1-agent,
 * 1-round run's CPU (bench/README.md, start-up). With a hundred times the budget, it is tiered up after some
 * hundred 1 KB answers instead (test/transport/undici.test.ts), sooner for longer ones: a short run never pays
 * for it, a long run still parses with the optimized code after its first moments. */
const WASM_TIERING_BUDGET = 180_000_000;
const V8_DEFAULT_WASM_TIERING_BUDGET = 1_800_000;

/** The budget is V8's flag, read when undici instantiates the parser: once, synchronously, when its first
 * connection's socket emits `connect` (then its `connected` diagnostics message). It is raised only for that
 * span, by a `connect` listener added when the socket is made (`net.client.socket`, so it runs before
 * undici's), and set back on the next tick. V8's code caches (Node's own modules, loaded later or in a worker
 * thread such as the results writer) are accepted only under the flags they were made with: with the flag left
 * changed, or raised from `beforeConnect` to `connected` (across the TCP connect, while the writer thread
 * starts), Node compiled them from source (callgrind, a 1-agent run: 180-224 M instructions more in the writer
 * thread, 47 M on the main thread, of about 2,000 M in all). A TLS connection makes no `net.client.socket`: a
 * run whose first connection is TLS keeps V8's default budget, as before. */
function raiseWasmTieringBudgetForTheParser(): void {
  const sockets = diagnostics.channel('net.client.socket');
  const connected = diagnostics.channel('undici:client:connected');
  const setBudget = (budget: number): void => setFlagsFromString(`--wasm-tiering-budget=${budget}`);
  const raise = (): void => {
    setBudget(WASM_TIERING_BUDGET);
    process.nextTick(setBudget, V8_DEFAULT_WASM_TIERING_BUDGET);
  };
  const onSocket = (message: unknown): void => void (message as { socket: Socket }).socket.once('connect', raise);
  // The parser exists from the first connection on: nothing more to do.
  const done = (): void => {
    sockets.unsubscribe(onSocket);
    connected.unsubscribe(done);
  };
  sockets.subscribe(onSocket);
  connected.subscribe(done);
}
raiseWasmTieringBudgetForTheParser();

const Dispatcher = require('undici/lib/dispatcher/dispatcher.js') as typeof Undici.Dispatcher;
// What undici's index does at load: every dispatcher gets the request API (request, stream, pipeline, …).
Object.assign(Dispatcher.prototype, require('undici/lib/api/index.js') as object);

export const Agent = require('undici/lib/dispatcher/agent.js') as typeof Undici.Agent;
export const Client = require('undici/lib/dispatcher/client.js') as typeof Undici.Client;
export const Pool = require('undici/lib/dispatcher/pool.js') as typeof Undici.Pool;
export const ProxyAgent = require('undici/lib/dispatcher/proxy-agent.js') as typeof Undici.ProxyAgent;
export const buildConnector = require('undici/lib/core/connect.js') as typeof Undici.buildConnector;
