// A user's own SQL on a PostgreSQL store (`flagtrail sql`): one statement, run inside a READ ONLY
// transaction, so that a write is refused by the server (SQLSTATE 25006), never by reading the SQL text.
// The statement goes over the extended protocol (one statement only: no `COMMIT; …` smuggled in), after
// a first query has fixed the transaction's snapshot (until then `SET TRANSACTION READ WRITE` would be
// allowed), and the transaction is rolled back whatever happened.
import type pg from "pg";
import { UsageError } from "../../errors.ts";
import { type PgStore, pgConnectionOf } from "./connection.ts";
import { describePgError } from "./errors.ts";
import { toPositional } from "./namedParams.ts";

/** Rows fetched from the cursor at a time: memory stays bounded whatever the row count. */
const FETCH_ROWS = 500;
const CURSOR = "flagtrail_sql";

/** Receives the result's column names and its rows (arrays in column order); returns the row count. */
export type RowConsumer = (columns: readonly string[], rows: AsyncIterable<unknown[]>) => Promise<number>;

function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** A server error about the statement (not the connection or login) is the user's input: exit 2. */
function statementError(error: unknown, url: string): Error {
  const code = sqlState(error);
  if (code === "25006") {
    return new UsageError(
      `refused: PostgreSQL does not allow this statement in a read-only transaction (${(error as Error).message}); flagtrail sql is read-only, nothing was written`,
    );
  }
  if (code !== undefined && !/^(08|28|3D|53|57P)/.test(code)) {
    return new UsageError(`SQL error: ${(error as Error).message}`);
  }
  return describePgError(error, url);
}

/** `config` sent over the extended protocol even without values (node-postgres' queryMode, untyped in @types/pg). */
function extended<T extends object>(config: T): T {
  return Object.assign(config, { queryMode: "extended" });
}

async function* cursorRows(client: pg.PoolClient, first: unknown[][]): AsyncGenerator<unknown[]> {
  let batch = first;
  while (batch.length > 0) {
    for (const row of batch) yield row;
    if (batch.length < FETCH_ROWS) return;
    const next = await client.query<unknown[]>({
      text: `FETCH ${FETCH_ROWS} FROM ${CURSOR}`,
      rowMode: "array",
    });
    batch = next.rows;
  }
}

async function* arrayRows(rows: unknown[][]): AsyncGenerator<unknown[]> {
  yield* rows;
}

/**
 * Runs `sql` with `@name` parameters and hands its rows to `consume`. A query (SELECT, VALUES, TABLE, a
 * read-only WITH) is read through a cursor; anything else runs as it is, in the same read-only
 * transaction: the server refuses what writes; what neither writes nor returns rows is refused here.
 */
export async function queryPgReadOnly(
  store: PgStore,
  sql: string,
  params: Record<string, unknown>,
  consume: RowConsumer,
): Promise<number> {
  const { pool, url } = pgConnectionOf(store);
  const { text, values } = toPositional(sql, params);
  const client = await pool.connect().catch((error: unknown) => {
    throw describePgError(error, url);
  });
  try {
    await client.query("BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY");
    await client.query("SELECT 1"); // takes the snapshot: from here on the transaction cannot turn read-write
    await client.query(`SAVEPOINT ${CURSOR}`);
    let columns: string[];
    let rows: AsyncIterable<unknown[]>;
    try {
      // DECLARE accepts queries only (not a write, nor one in a WITH): anything else runs below instead.
      await client.query(extended({ text: `DECLARE ${CURSOR} NO SCROLL CURSOR FOR ${text}`, values }));
      const first = await client.query<unknown[]>({
        text: `FETCH ${FETCH_ROWS} FROM ${CURSOR}`,
        rowMode: "array",
      });
      columns = first.fields.map((f) => f.name);
      rows = cursorRows(client, first.rows);
    } catch {
      await client.query(`ROLLBACK TO SAVEPOINT ${CURSOR}`);
      const result = await client.query<unknown[]>(extended({ text, values, rowMode: "array" as const }));
      if (result.fields.length === 0) {
        throw new UsageError(
          "refused: the statement returns no rows (flagtrail sql runs queries only; it ran in a read-only transaction, rolled back)",
        );
      }
      columns = result.fields.map((f) => f.name);
      rows = arrayRows(result.rows);
    }
    return await consume(columns, rows);
  } catch (error) {
    throw error instanceof UsageError ? error : statementError(error, url);
  } finally {
    await client.query("ROLLBACK").catch(() => {});
    // The session may carry settings the statement made: it goes, rather than back to the pool.
    client.release(true);
  }
}
