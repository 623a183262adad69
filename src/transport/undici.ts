// The parts of undici roundload uses, loaded alone. undici's index also loads fetch, WebSocket, EventSource,
// cookies, caches, mocks and interceptors: about 0.12 CPU-s of every run's start (issue 26). These are undici 7's
// own files (its package.json has no `exports`), pinned by package-lock.json; test/transport/undici.test.ts checks
// they are the very classes the index exports, so an upgrade that moves them fails there, not in a run.
import { createRequire } from 'node:module';
import type * as Undici from 'undici';

const require = createRequire(import.meta.url);

const Dispatcher = require('undici/lib/dispatcher/dispatcher.js') as typeof Undici.Dispatcher;
// What undici's index does at load: every dispatcher gets the request API (request, stream, pipeline, …).
Object.assign(Dispatcher.prototype, require('undici/lib/api/index.js') as object);

export const Agent = require('undici/lib/dispatcher/agent.js') as typeof Undici.Agent;
export const Client = require('undici/lib/dispatcher/client.js') as typeof Undici.Client;
export const Pool = require('undici/lib/dispatcher/pool.js') as typeof Undici.Pool;
export const ProxyAgent = require('undici/lib/dispatcher/proxy-agent.js') as typeof Undici.ProxyAgent;
export const buildConnector = require('undici/lib/core/connect.js') as typeof Undici.buildConnector;
