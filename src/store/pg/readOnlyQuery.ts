// A user's own SQL on PostgreSQL (`flagtrail sql`), refused unless a single read query (READ ONLY alone lets
// COPY … TO a file or program run, and pg_read_file). So the statement goes 1. over the extended protocol
// (one statement: no `COMMIT; …` smuggled in) as `DECLARE … CURSOR FOR <query>`, which takes only SELECT,
// VALUES, TABLE and WITH … SELECT (no COPY, DML, SELECT … INTO, nor a WITH that writes); 2. after
// ./queryGuard.ts has checked the plan of that DECLARE (EXPLAIN plans, does not run); 3. in a READ ONLY
// transaction whose snapshot a first query fixed (before, `SET TRANSACTION READ WRITE` would pass), rolled back.
import type pg from "pg";
import { QueryTimeoutError, sqlUsageError, UsageError } from "../../errors.ts";
import { type PgStore, pgConnectionOf } from "../connection.ts";
import { BATCH_ROWS, type RowConsumer, rowsInBatches } from "../readOnlyQuery.ts";
import { describePgError } from "./errors.ts";
import { toPositional } from "./namedParams.ts";
import { refuseUnsafePlan } from "./queryGuard.ts";

const CURSOR = "flagtrail_sql";
const FETCH = `FETCH ${BATCH_ROWS} FROM ${CURSOR}`;

function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** A server error about the statement (not the connection or login) is the user's input: exit 2. */
function statementError(error: unknown, url: string): Error {
  const code = sqlState(error); // none on our own errors, which describePgError returns as they are
  const message = (error as Error).message;
  if (code === "42601" || code === "0A000") {
    // A syntax error here is also what COPY, DML, SHOW… or a second statement give as a cursor's query.
    return new UsageError(
      `refused: flagtrail sql runs a single read query (SELECT, VALUES, TABLE or WITH … SELECT) and PostgreSQL does not take this as one (${message}); nothing was run`,
    );
  }
  if (code === "25006") {
    return new UsageError(
      `refused: PostgreSQL does not allow this statement in a read-only transaction (${message}); flagtrail sql is read-only, nothing was written`,
    );
  }
  if (code !== undefined && !/^(08|28|3D|53|57)/.test(code)) return sqlUsageError(message);
  return describePgError(error, url);
}

/** `config` sent over the extended protocol even without values (node-postgres' queryMode, untyped in @types/pg). */
function extended<T extends object>(config: T): T {
  return Object.assign(config, { queryMode: "extended" });
}

/** Runs statements on `client` within `limitMs` of server time in all, each capped by what is left. */
function timeLimited(client: pg.PoolClient, limitMs: number) {
  let left = limitMs;
  return async (config: pg.QueryConfig & { rowMode?: "array" }): Promise<pg.QueryResult> => {
    if (left <= 0) throw new QueryTimeoutError(limitMs);
    await client.query(`SET LOCAL statement_timeout = ${Math.ceil(left)}`);
    const started = performance.now();
    try {
      return await client.query(config as pg.QueryConfig);
    } catch (error) {
      // 57014 is also a cancel from elsewhere (pg_cancel_backend): ours is the one that used up the time.
      if (sqlState(error) === "57014" && performance.now() - started >= left - 50)
        throw new QueryTimeoutError(limitMs);
      throw error;
    } finally {
      left -= performance.now() - started;
    }
  };
}

/** queryReadOnly on PostgreSQL: anything but a single read query is refused (UsageError) with nothing run. */
export async function queryPgReadOnly(
  store: PgStore,
  sql: string,
  params: Record<string, unknown>,
  consume: RowConsumer,
  timeoutMs: number,
): Promise<number> {
  const { pool, url } = pgConnectionOf(store);
  const { text, values } = toPositional(sql, params);
  const client = await pool.connect().catch((error: unknown) => {
    throw describePgError(error, url);
  });
  const run = timeLimited(client, timeoutMs);
  const nextBatch = async () => (await run({ text: FETCH, rowMode: "array" })).rows as unknown[][];
  try {
    await client.query("BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY");
    await client.query("SELECT 1"); // takes the snapshot: from here on the transaction cannot turn read-write
    const declare = `DECLARE ${CURSOR} NO SCROLL CURSOR FOR ${text}`;
    const plan = await run(extended({ text: `EXPLAIN (VERBOSE, FORMAT JSON) ${declare}`, values }));
    refuseUnsafePlan(plan.rows[0]?.["QUERY PLAN"]);
    await run(extended({ text: declare, values }));
    const first = await run({ text: FETCH, rowMode: "array" });
    const columns = first.fields.map((f) => f.name);
    return await consume(columns, rowsInBatches(first.rows as unknown[][], nextBatch));
  } catch (error) {
    throw statementError(error, url);
  } finally {
    await client.query("ROLLBACK").catch(() => {});
    // The session may carry settings the statement made: it goes, rather than back to the pool.
    client.release(true);
  }
}
