// The report's reads on PostgreSQL (readReportSnapshot): the report's one text per query, or its
// PostgreSQL variant (./reportQueries.ts) where there is one, all read in one REPEATABLE READ, READ ONLY
// transaction, long results through a cursor.
import type pg from "pg";
import type { PgStore } from "../connection.ts";
import type { ChangeCsvRow } from "../reportQueries/changesCsv.ts";
import {
  BATCH_ROWS,
  bindParams,
  paramsFor,
  QUERIES,
  type ReportParams,
  type ReportQueryName,
  type ReportRows,
  type ReportSnapshot,
  type TimeTexts,
} from "../reportQueries.ts";
import { toPositional } from "./namedParams.ts";
import { inPgReadSnapshot } from "./queries.ts";
import { PG_CHANGES_CSV, PG_VARIANTS } from "./reportQueries.ts";

let cursors = 0;

/**
 * The rows of a query through its own cursor, BATCH_ROWS at a time, one batch read ahead: the next FETCH
 * is sent before a batch is handed over, so the server fills it while the report writes this one (two
 * processes at work instead of one waiting for the other). At most two batches are in memory. The cursor
 * is closed however the reader stops.
 */
export async function* cursorBatches<Row>(
  client: pg.ClientBase,
  text: string,
  values: unknown[],
): AsyncGenerator<Row[]> {
  cursors += 1;
  const cursor = `flagtrail_report_${cursors}`;
  const fetch = () => client.query(`FETCH ${BATCH_ROWS} FROM ${cursor}`);
  await client.query(`DECLARE ${cursor} NO SCROLL CURSOR FOR ${text}`, values);
  let ahead: ReturnType<typeof fetch> | null = fetch();
  try {
    for (;;) {
      const batch = (await ahead).rows as Row[];
      ahead = batch.length < BATCH_ROWS ? null : fetch();
      if (batch.length > 0) yield batch;
      if (ahead === null) return;
    }
  } finally {
    // A reader that stops early leaves a FETCH under way: the connection answers it before the CLOSE.
    await ahead?.catch(() => undefined);
    await client.query(`CLOSE ${cursor}`);
  }
}

function snapshotOf(client: pg.ClientBase): ReportSnapshot {
  const bound = (name: ReportQueryName, params: ReportParams) => {
    const sql = PG_VARIANTS[name] ?? QUERIES[name];
    return toPositional(sql, paramsFor(sql, bindParams(params)));
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
    changes: (params: ReportParams) => {
      const { text, values } = toPositional(PG_CHANGES_CSV, paramsFor(PG_CHANGES_CSV, bindParams(params)));
      return cursorBatches<ChangeCsvRow>(client, text, values);
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
