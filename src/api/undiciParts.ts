// The parts of undici the client uses, required from their own files: undici's index loads all of it
// (fetch, WebSocket, EventSource, mocks, caches: ~100 modules, 0.1–0.3 s at every sync's start) to
// export them. These are the very files the index re-exports, so a dispatcher made from the index (a
// test's MockAgent) is still an instance of this Dispatcher. The types are undici's own.
import { createRequire } from "node:module";
import type * as undici from "undici";

const require = createRequire(import.meta.url);

export const Agent = require("undici/lib/dispatcher/agent.js") as typeof undici.Agent;
export const Dispatcher = require("undici/lib/dispatcher/dispatcher.js") as typeof undici.Dispatcher;

/** undici's request() without its wrapper: `origin` and `path` given apart, the dispatcher as `this`. */
export const dispatchRequest = require("undici/lib/api/api-request.js") as (
  this: undici.Dispatcher,
  options: undici.Dispatcher.RequestOptions,
) => Promise<undici.Dispatcher.ResponseData>;
