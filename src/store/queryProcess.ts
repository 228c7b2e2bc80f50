// A user's SQLite query runs in a child process: better-sqlite3 cannot interrupt a statement (no
// sqlite3_interrupt), so a runaway one would outlast SIGINT, SIGTERM and any time limit here, and in a
// worker thread too (checked: terminating it and exiting both hung). A child can be killed at once. It
// sends rows in batches when asked: memory stays bounded, and a slow reader holds the query back.
import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { z } from "zod";
import { FlagtrailError, QueryTimeoutError, UsageError } from "../errors.ts";

const BATCH_ROWS = 500;
/** A loaded machine starts node in about a second; this is far beyond. */
const START_LIMIT_MS = 60_000;

// CommonJS for `node -e`: no file to find beside dist/ or src/, no TypeScript loader. argv: the driver's
// path, the parent's pid. The watchdog thread ends the process once its parent is gone (a parent killed
// with SIGKILL cannot kill its child), since the main thread may be inside one long SQLite call. The IPC
// channel is all that keeps the process alive (the watchdog is unref'd): it ends once the parent disconnects.
const CHILD = `"use strict";
const { Worker } = require("node:worker_threads");
new Worker('const { workerData } = require("node:worker_threads"); setInterval(() => { if (process.ppid !== workerData) process.kill(process.pid, "SIGKILL"); }, 250);', { eval: true, workerData: Number(process.argv[2]) }).unref();
const Database = require(process.argv[1]);
let rows;
process.on("message", (m) => {
  try {
    if (m.path !== undefined) {
      const db = new Database(m.path, { readonly: true, fileMustExist: true });
      db.pragma("busy_timeout = 5000");
      db.pragma("query_only = ON");
      rows = db.prepare(m.sql).raw(true).iterate(m.params);
    }
    const batch = [];
    for (let next; batch.length < ${BATCH_ROWS} && !(next = rows.next()).done; ) batch.push(next.value);
    process.send({ rows: batch, done: batch.length < ${BATCH_ROWS} });
  } catch (error) {
    process.send({ error: String(error && error.message), sqlite: !!error && error.name === "SqliteError" });
  }
});
process.send({ rows: [], done: false });
`;

const replySchema = z.union([
  z.object({ rows: z.array(z.array(z.unknown())), done: z.boolean() }),
  z.object({ error: z.string(), sqlite: z.boolean() }),
]);
type Batch = { rows: unknown[][]; done: boolean };

export interface ChildQuery {
  /** The SQLite file (a second connection opens it: not `:memory:`). */
  path: string;
  sql: string;
  params: Record<string, unknown>;
  /** Time the query may spend working, summed over its batches (the child's start-up not counted). */
  timeoutMs: number;
}

/** Waits for the child's next reply (to `request`, if any) for at most `budgetMs`, else `timedOut()`. */
function ask(child: ChildProcess, request: object | undefined, budgetMs: number, timedOut: () => Error) {
  return new Promise<Batch>((resolve, reject) => {
    const settle = (outcome: () => void) => {
      clearTimeout(timer);
      child.off("message", onMessage).off("exit", onExit).off("error", onError);
      outcome();
    };
    const onMessage = (message: unknown) => settle(() => replied(message, resolve, reject));
    const onExit = (code: number | null, signal: string | null) =>
      settle(() =>
        reject(
          new FlagtrailError(`The query's process ended unexpectedly (${signal ?? `exit code ${code}`}).`),
        ),
      );
    const onError = (error: Error) =>
      settle(() => reject(new FlagtrailError(`The query's process failed: ${error.message}.`)));
    const timer = setTimeout(() => settle(() => reject(timedOut())), Math.max(0, budgetMs));
    child.on("message", onMessage).on("exit", onExit).on("error", onError);
    if (request) child.send(request, (error) => error && onError(error));
  });
}

function replied(message: unknown, resolve: (batch: Batch) => void, reject: (error: Error) => void): void {
  const reply = replySchema.parse(message);
  if ("rows" in reply) resolve(reply);
  else if (reply.sqlite) reject(new UsageError(`SQL error: ${reply.error}`));
  else reject(new FlagtrailError(`The query failed: ${reply.error}.`));
}

/**
 * The query's rows, read from a child process started on the first `next()`; `return()` (or the end,
 * an error, a time-out, this process exiting) kills it.
 */
export async function* rowsFromChildProcess(query: ChildQuery): AsyncGenerator<unknown[]> {
  const driver = createRequire(import.meta.url).resolve("better-sqlite3");
  const child = spawn(process.execPath, ["-e", CHILD, driver, String(process.pid)], {
    stdio: ["ignore", "ignore", "ignore", "ipc"],
    serialization: "advanced", // Buffers (BLOBs) arrive as Buffers
  });
  const killChild = () => child.kill("SIGKILL");
  // The CLI's SIGINT/SIGTERM handler exits the process, which runs only 'exit' listeners: the child goes too.
  process.once("exit", killChild);
  try {
    // Started (node and the driver loaded): from here the time limit counts.
    await ask(
      child,
      undefined,
      START_LIMIT_MS,
      () => new FlagtrailError("The query's process did not start."),
    );
    let budget = query.timeoutMs;
    let request: object = { path: query.path, sql: query.sql, params: query.params };
    for (;;) {
      const started = performance.now();
      const batch = await ask(child, request, budget, () => new QueryTimeoutError(query.timeoutMs));
      budget -= performance.now() - started;
      yield* batch.rows;
      if (batch.done) return;
      request = {};
    }
  } finally {
    process.off("exit", killChild);
    killChild();
  }
}
