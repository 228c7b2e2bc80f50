// A user's own SQL (`flagtrail sql`; PostgreSQL: pg/readOnlyQuery.ts): only reads returning rows, per SQLite,
// run by a child process killed at will (better-sqlite3 cannot interrupt a statement; a worker thread hung).
import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { Readable } from "node:stream";
import { z } from "zod";
import { FlagtrailError, QueryTimeoutError, sqlUsageError, UsageError } from "../errors.ts";
import { sqliteOf } from "./connection.ts";
import { type AnyStore, pgSide } from "./openAny.ts";

/** Receives the result's column names and its rows (arrays in column order); returns the row count. */
export type RowConsumer = (columns: readonly string[], rows: AsyncIterable<unknown[]>) => Promise<number>;

/** Rows read at a time (child batches, PostgreSQL's FETCH): bounded memory; a slow reader holds the query. */
export const BATCH_ROWS = 500;

export async function* rowsInBatches(first: unknown[][], next: () => Promise<unknown[][]>) {
  for (let batch = first; ; batch = await next()) {
    yield* batch;
    if (batch.length < BATCH_ROWS) return;
  }
}

/** Compiling and binding errors (a missing named parameter: RangeError/TypeError) are bad input all the same. */
function binding<T>(bind: () => T): T {
  try {
    return bind();
  } catch (error) {
    throw error instanceof Error ? sqlUsageError(error.message) : error;
  }
}

// CommonJS for `node -e` (no file, no TypeScript loader); argv: driver path, parent pid. The watchdog thread
// kills it once its parent is gone (the main thread may be in a long SQLite call); IPC alone keeps it alive.
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
    process.send({ rows: batch });
  } catch (error) {
    process.send({ error: String(error && error.message), sqlite: !!error && error.name === "SqliteError" });
  }
});
process.send({ rows: [] });
`;

const replySchema = z.union([
  z.object({ rows: z.array(z.array(z.unknown())) }),
  z.object({ error: z.string(), sqlite: z.boolean() }),
]);

/** The child's next batch (answering `request`, if any) within `budgetMs`, else `timedOut()`. */
function ask(child: ChildProcess, request: object | undefined, budgetMs: number, timedOut: () => Error) {
  return new Promise<unknown[][]>((resolve, reject) => {
    const settle = (outcome: () => void) => {
      clearTimeout(timer);
      child.off("message", onMessage).off("exit", onExit).off("error", onError);
      outcome();
    };
    const onMessage = (message: unknown) =>
      settle(() => {
        const reply = replySchema.parse(message);
        if ("rows" in reply) resolve(reply.rows);
        else if (reply.sqlite) reject(sqlUsageError(reply.error));
        else reject(new FlagtrailError(`The query failed: ${reply.error}.`));
      });
    const fail = (text: string) => settle(() => reject(new FlagtrailError(`The query's process ${text}.`)));
    const onExit = (code: number | null, signal: string | null) =>
      fail(`ended unexpectedly (${signal ?? `exit code ${code}`})`);
    const onError = (error: Error) => fail(`failed: ${error.message}`);
    const timer = setTimeout(() => settle(() => reject(timedOut())), Math.max(0, budgetMs));
    child.on("message", onMessage).on("exit", onExit).on("error", onError);
    if (request) child.send(request, (error) => error && onError(error));
  });
}

// The query's rows from a child process started on the first `next()`, which `return()` (or the end, an
// error, this process exiting) kills; its batches may work `timeoutMs` in all, its start-up not counted.
async function* rowsFromChildProcess(
  query: { path: string; sql: string; params: Record<string, unknown> },
  timeoutMs: number,
): AsyncGenerator<unknown[]> {
  const driver = createRequire(import.meta.url).resolve("better-sqlite3");
  const child = spawn(process.execPath, ["-e", CHILD, driver, String(process.pid)], {
    stdio: ["ignore", "ignore", "ignore", "ipc"],
    serialization: "advanced", // Buffers (BLOBs) arrive as Buffers
  });
  const killChild = () => child.kill("SIGKILL");
  // The CLI's SIGINT/SIGTERM handler exits the process, which runs only 'exit' listeners: the child goes too.
  process.once("exit", killChild);
  try {
    const notStarted = () => new FlagtrailError("The query's process did not start.");
    await ask(child, undefined, 60_000, notStarted); // a loaded machine starts node in about a second
    let budget = timeoutMs;
    const next = async (request: object) => {
      const started = performance.now();
      try {
        return await ask(child, request, budget, () => new QueryTimeoutError(timeoutMs));
      } finally {
        budget -= performance.now() - started;
      }
    };
    yield* rowsInBatches(await next(query), () => next({}));
  } finally {
    process.off("exit", killChild);
    killChild();
  }
}

/** Runs `query` read-only (`@name` params bound before any output), rows to `consume`; returns the count. */
export async function queryReadOnly(
  store: AnyStore,
  query: string,
  params: Record<string, unknown>,
  consume: RowConsumer,
  timeoutMs: number,
): Promise<number> {
  if (store.engine === "postgres") {
    return (await pgSide()).queryPgReadOnly(store, query, params, consume, timeoutMs);
  }
  const sqlite = sqliteOf(store);
  // Layer 2 of the read-only guarantee: whatever SQLite classified wrongly is refused when it runs.
  sqlite.pragma("query_only = ON");
  const statement = binding(() => sqlite.prepare(query));
  // Layer 1: anything that may write (VACUUM INTO, temp DDL, UPDATE … RETURNING, a writing PRAGMA) is
  // refused before it runs. SQLite decides (sqlite3_stmt_readonly), not string matching.
  if (!statement.readonly) {
    throw new UsageError(
      "refused: SQLite classifies this statement as one that writes (flagtrail sql is read-only; nothing was run)",
    );
  }
  // ATTACH, BEGIN, a PRAGMA that only sets…: not queries, not run either.
  if (!statement.reader) {
    throw new UsageError(
      "refused: the statement returns no rows (flagtrail sql runs queries only; nothing was run)",
    );
  }
  const columns = statement.columns().map((c) => c.name);
  binding(() => statement.bind(params));
  // An in-memory store (tests) has no file a second connection could open: it runs here, unstoppable, and
  // whole (no statement left busy when the consumer stops early).
  if (store.path === ":memory:") {
    let rows: unknown[][];
    try {
      rows = statement.raw(true).all() as unknown[][];
    } catch (error) {
      // As from the child: SQLite's own errors are the query's fault (2), anything else a failure (1).
      throw error instanceof Error && error.name === "SqliteError" ? sqlUsageError(error.message) : error;
    }
    return consume(columns, Readable.from(rows));
  }
  return consume(columns, rowsFromChildProcess({ path: store.path, sql: query, params }, timeoutMs));
}
