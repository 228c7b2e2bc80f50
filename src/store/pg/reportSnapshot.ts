// The report's reads on PostgreSQL: each query's one text or its variant (./reportQueries.ts), all in one
// REPEATABLE READ, READ ONLY transaction, long results through a cursor.
import type pg from "pg";
import type { ChainHead } from "../../headSignatures.ts";
import { type PgStore, pgConnectionOf } from "../connection.ts";
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
  SNAPSHOT_READS,
  type TimeTexts,
} from "../reportQueries.ts";
import { toPositional } from "./namedParams.ts";
import { inPgReadSnapshot } from "./queries.ts";
import { PG_CHANGES_CSV, PG_UNREVIEWED_IDS, PG_VARIANTS } from "./reportQueries.ts";

let cursors = 0;

/** What a cursor needs of a session: its statements answered in the order they are sent. */
interface Session {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/**
 * A query's rows through its own cursor, BATCH_ROWS at a time, the next FETCH sent before a batch is
 * handed over (the server fills it while the report writes this one; two batches in memory at most).
 */
export async function* cursorBatches<Row>(
  client: Session,
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

// The report transaction's settings. Cursors are read to the end: plan for all rows (the default first
// tenth chose plans ~20% slower on the 1M store's month). The unreviewed window sorts ~6 MB (1M records),
// which 4 MB sent to disk. Its pages were just read: a random page costs about a sequential one (4.0
// planned the review records' index probes as a window scan). No JIT: it cost more than it saved
// (Debian's PostgreSQL 15, 1M month: 2,662–3,108 ms with, 1,769–1,983 ms without).
const SETTINGS = `SET LOCAL cursor_tuple_fraction = 1.0;
SET LOCAL work_mem = '32MB';
SET LOCAL random_page_cost = 1.1;
SET LOCAL jit = off`;
// The second session's: a lock the first session holds, with a request queued behind it (an ALTER, a LOCK
// TABLE), would keep its read waiting while the report waits on it, a deadlock the server cannot see.
// After 2 s its read fails and goes on the first session instead.
const SIDE_SETTINGS = SETTINGS.replace("SET LOCAL jit", "SET LOCAL lock_timeout = '2s';\nSET LOCAL jit");

// Reads started ahead (ReportSnapshot.ahead), each a cursor on a second session importing the first's
// snapshot, computed while the report writes the CSVs (1M month: its wait on the server 1,014 → 628 ms,
// medians of eight). A read whose first batch failed is read again on the first session (its error shown).
class ReadsAhead {
  /** The second session, once asked for; its statements are sent one after another. */
  private side: Promise<pg.PoolClient> | null = null;
  private last: Promise<unknown> = Promise.resolve();
  // Opened once the change CSVs' read has its first batch (or a read ahead is taken): until then they
  // would take CPU from the read the report waits for (1M month: its wait 810 → 653 ms, medians of eight).
  private readonly gate: Promise<void>;
  readonly open: () => void;
  private readonly started = new Map<
    string,
    { first: Promise<IteratorResult<unknown[]>>; rest: AsyncGenerator<unknown[]> }
  >();

  constructor(
    private readonly pool: pg.Pool,
    private readonly main: pg.ClientBase,
  ) {
    let open = () => {};
    this.gate = new Promise((resolve) => {
      open = resolve;
    });
    this.open = open;
  }

  /** The second session, connected once the first has exported its snapshot (its next request waits). */
  private session(): Promise<pg.PoolClient> {
    if (this.side === null) {
      const exported = this.main.query<{ id: string }>("SELECT pg_export_snapshot() AS id");
      this.side = exported.then(({ rows }) => this.connect(rows[0]!.id));
      this.last = Promise.all([this.side, this.gate]).catch(() => undefined);
    }
    return this.side;
  }

  /** Starts the reads behind the gate. */
  async start(reads: readonly { key: string; text: string; values: unknown[] }[]): Promise<void> {
    this.session().catch(() => undefined);
    const session: Session = { query: (text, values) => this.send(text, values) };
    for (const { key, text, values } of reads) {
      if (this.started.has(key)) continue;
      const rest = cursorBatches<unknown>(session, text, values);
      const first = rest.next();
      // Consumed (take) or dropped (close): never an unhandled rejection meanwhile.
      first.catch(() => undefined);
      this.started.set(key, { first, rest });
    }
  }

  /** A read on the second session now, not behind the gate (the report waits for it), else on the first. */
  async now<Row>({ text, values }: { text: string; values: unknown[] }): Promise<Row[]> {
    const side = await this.session().catch(() => this.main);
    return (await side.query(text, values).catch(() => this.main.query(text, values))).rows as Row[];
  }

  /** A statement on the second session, after the one before it whatever became of that. */
  private send(text: string, values?: unknown[]): Promise<{ rows: unknown[] }> {
    const side = this.side!;
    const result = this.last.catch(() => undefined).then(async () => await (await side).query(text, values));
    this.last = result;
    return result;
  }

  /** The batches started for `key` (once), or null when none were or the first failed. */
  async take(key: string): Promise<AsyncGenerator<unknown[]> | null> {
    const read = this.started.get(key);
    if (read === undefined) return null;
    this.started.delete(key);
    this.open();
    const first = await read.first.catch(() => null);
    if (first === null) return null;
    return (async function* () {
      if (!first.done) yield first.value;
      yield* read.rest;
    })();
  }

  private async connect(snapshotId: string): Promise<pg.PoolClient> {
    const side = await this.pool.connect();
    try {
      await side.query("BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY");
      // A utility command takes no parameters; the id is the server's own (hex digits and dashes).
      if (!/^[0-9A-F-]+$/i.test(snapshotId)) throw new Error(`unexpected snapshot id ${snapshotId}`);
      await side.query(`SET TRANSACTION SNAPSHOT '${snapshotId}'`);
      await side.query(SIDE_SETTINGS);
      return side;
    } catch (error) {
      side.release(true);
      throw error;
    }
  }

  /** Closes the cursors never taken, then ends the second session (before the first one's transaction ends). */
  async close(): Promise<void> {
    this.open();
    if (this.side === null) return;
    for (const { first, rest } of this.started.values()) {
      await first.catch(() => undefined);
      await rest.return(undefined).catch(() => undefined);
    }
    this.started.clear();
    await this.last.catch(() => undefined);
    const side = await this.side.catch(() => null);
    if (side === null) return;
    let broken = false;
    await side.query("ROLLBACK").catch(() => {
      broken = true;
    });
    side.release(broken || undefined);
  }
}

function snapshotOf(client: pg.ClientBase, ahead: ReadsAhead): ReportSnapshot {
  const positional = (sql: string, p: ReportParams) => toPositional(sql, paramsFor(sql, bindParams(p)));
  const bound = (name: ReportQueryName, p: ReportParams) => positional(PG_VARIANTS[name] ?? QUERIES[name], p);
  const keyOf = (name: ReportQueryName, values: unknown[]) => JSON.stringify([name, values]);
  return {
    rows: async <N extends ReportQueryName>(name: N, params: ReportParams) => {
      const { text, values } = bound(name, params);
      const read = await ahead.take(keyOf(name, values));
      if (read === null) return (await client.query(text, values)).rows as ReportRows[N][];
      const rows: ReportRows[N][] = [];
      for await (const batch of read) rows.push(...(batch as ReportRows[N][]));
      return rows;
    },
    ahead: (names: readonly ReportQueryName[], params: ReportParams) =>
      ahead.start(
        names.map((name) => {
          const { text, values } = bound(name, params);
          return { key: keyOf(name, values), text, values };
        }),
      ),
    batches: async function* <N extends ReportQueryName>(name: N, params: ReportParams) {
      const { text, values } = bound(name, params);
      const read = await ahead.take(keyOf(name, values));
      yield* (read as AsyncGenerator<ReportRows[N][]> | null) ??
        cursorBatches<ReportRows[N]>(client, text, values);
    },
    changes: async function* (params: ReportParams) {
      // On the second session while this one reads the rows (1M month, the server's CPU: 178 → 91 ‖ 63 ms).
      const ids = ahead.now<{ ids: string[] | null }>(positional(PG_UNREVIEWED_IDS, params));
      const unreviewed = ids.then(([row]) => new Set(row?.ids));
      unreviewed.catch(() => undefined);
      const { text, values } = positional(PG_CHANGES_CSV, params);
      try {
        for await (const batch of cursorBatches<ChangeCsvRow>(client, text, values)) {
          ahead.open();
          const flagged = await unreviewed;
          for (const row of batch) if (flagged.has(row.id)) row.unreviewed = 1;
          yield batch;
        }
      } finally {
        ahead.open();
      }
    },
    chainHead: async () => (await client.query<ChainHead>(SNAPSHOT_READS.chainHead)).rows[0] ?? null,
    storedRecords: async () =>
      (await client.query<{ n: number }>(SNAPSHOT_READS.storedRecords)).rows[0]?.n ?? 0,
    timeTextsNear: async (instant: number) => {
      const { text, values } = toPositional(SNAPSHOT_READS.timeTextsNear, { instant });
      return (await client.query<TimeTexts>(text, values)).rows;
    },
  };
}

export function readPgReportSnapshot<T>(store: PgStore, read: (snapshot: ReportSnapshot) => Promise<T>) {
  return inPgReadSnapshot(store, async (client) => {
    await client.query(SETTINGS);
    const ahead = new ReadsAhead(pgConnectionOf(store).pool, client);
    try {
      return await read(snapshotOf(client, ahead));
    } finally {
      await ahead.close();
    }
  });
}
