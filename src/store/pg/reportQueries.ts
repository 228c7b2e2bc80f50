// The report's reads on PostgreSQL: src/store/reportQueries.ts's queries in this dialect, same names,
// parameters (`@name`, bound from the same JSON values, so the Markdown prints the same `--param`s) and
// rows in the same order. What differs, and why:
//   - JSON lists: json_array_elements(_text)(@x::json) and ->> for SQLite's json_each / json_extract;
//   - text sorts COLLATE "C" (SQLite's byte order; the server's default collation may be ICU's), and so
//     does max() over text;
//   - NULLs sort first ascending as on SQLite (NULLS FIRST where a sorted column can be NULL);
//   - a grouped column appears in GROUP BY (PostgreSQL has no bare columns), a subquery has an alias,
//     ORDER BY uses no output alias inside an expression.
// Everything is read in one REPEATABLE READ, READ ONLY transaction; long results through a cursor.
import type pg from "pg";
import {
  BATCH_ROWS,
  bindParams,
  paramsFor,
  type ReportParams,
  type ReportQueryName,
  type ReportRows,
  type ReportSnapshot,
  type TimeTexts,
} from "../reportQueries.ts";
import type { PgStore } from "./connection.ts";
import { PG_ENTITY_REPORT_QUERIES } from "./entityReportQueries.ts";
import { toPositional } from "./namedParams.ts";
import { inPgReadSnapshot } from "./readSnapshot.ts";
import { PG_COMPLETENESS_QUERIES } from "./reportQueries/completeness.ts";
import { PG_ENTITY_SECTION_QUERIES } from "./reportQueries/entities.ts";
import { PG_MUTATION_QUERIES } from "./reportQueries/mutations.ts";
import { PG_OVERVIEW_QUERIES } from "./reportQueries/overview.ts";
import { PG_REVIEW_QUERIES } from "./reportQueries/reviews.ts";

/** The queries of src/store/reportQueries.ts (see the notes there), in PostgreSQL's dialect. */
export const PG_QUERIES: Record<ReportQueryName, string> = {
  ...PG_ENTITY_REPORT_QUERIES,
  ...PG_ENTITY_SECTION_QUERIES,
  ...PG_OVERVIEW_QUERIES,
  ...PG_COMPLETENESS_QUERIES,
  ...PG_REVIEW_QUERIES,
  ...PG_MUTATION_QUERIES,
};

/** A query's PostgreSQL text and the values it binds, as the report prints them for `flagtrail sql`. */
export function pgReportQuery(
  name: ReportQueryName,
  params: ReportParams,
): { sql: string; params: Record<string, unknown> } {
  const sql = PG_QUERIES[name];
  return { sql, params: paramsFor(sql, bindParams(params)) };
}

let cursors = 0;

/** The rows of a query through its own cursor, BATCH_ROWS at a time; the cursor is closed however the reader stops. */
async function* cursorBatches<Row>(
  client: pg.ClientBase,
  text: string,
  values: unknown[],
): AsyncGenerator<Row[]> {
  cursors += 1;
  const cursor = `flagtrail_report_${cursors}`;
  await client.query(`DECLARE ${cursor} NO SCROLL CURSOR FOR ${text}`, values);
  try {
    for (;;) {
      const batch = (await client.query(`FETCH ${BATCH_ROWS} FROM ${cursor}`)).rows as Row[];
      if (batch.length > 0) yield batch;
      if (batch.length < BATCH_ROWS) return;
    }
  } finally {
    await client.query(`CLOSE ${cursor}`);
  }
}

function snapshotOf(client: pg.ClientBase): ReportSnapshot {
  const bound = (name: ReportQueryName, params: ReportParams) => {
    const query = pgReportQuery(name, params);
    return toPositional(query.sql, query.params);
  };
  return {
    rows: async <N extends ReportQueryName>(name: N, params: ReportParams) => {
      const { text, values } = bound(name, params);
      return (await client.query(text, values)).rows as ReportRows[N][];
    },
    batches: <N extends ReportQueryName>(name: N, params: ReportParams) => {
      const { text, values } = bound(name, params);
      return cursorBatches<ReportRows[N]>(client, text, values);
    },
    chainHead: async () => {
      const [head] = (
        await client.query<{ seq: number; chain_hash: string }>(
          "SELECT seq, chain_hash FROM audit_logs ORDER BY seq DESC LIMIT 1",
        )
      ).rows;
      return head ? { seq: head.seq, chainHash: head.chain_hash } : null;
    },
    storedRecords: async () =>
      (await client.query<{ n: number }>("SELECT count(*) AS n FROM audit_logs")).rows[0]?.n ?? 0,
    timeTextsNear: async (instant: number) =>
      (
        await client.query<TimeTexts>(
          `(SELECT date_text, time_text FROM audit_logs WHERE occurred_at <= $1 ORDER BY occurred_at DESC LIMIT 1)
           UNION ALL
           (SELECT date_text, time_text FROM audit_logs WHERE occurred_at > $1 ORDER BY occurred_at LIMIT 1)`,
          [instant],
        )
      ).rows,
  };
}

/** readReportSnapshot for PostgreSQL: one REPEATABLE READ, READ ONLY transaction; writes nothing. */
export function readPgReportSnapshot<T>(
  store: PgStore,
  read: (snapshot: ReportSnapshot) => Promise<T>,
): Promise<T> {
  return inPgReadSnapshot(store, async (client) => {
    // A report reads every cursor to its end: plan for all rows, not for the first tenth (the default,
    // which on a 1M-record store chose plans ~20% slower for the month's CSVs and summaries: bench).
    // And sorts in memory: the unreviewed window sorts two months of changes (~6 MB for 1M records),
    // which the default 4 MB sent to disk. Both for this transaction only.
    await client.query("SET LOCAL cursor_tuple_fraction = 1.0");
    await client.query("SET LOCAL work_mem = '32MB'");
    // And reads the period's index and table pages, which its first queries have just read: a random
    // page costs about what a sequential one does (the default 4.0 is for spinning disks, and planned
    // the review records' per-action-type index probes as a scan of every record of the window).
    await client.query("SET LOCAL random_page_cost = 1.1");
    return await read(snapshotOf(client));
  });
}
