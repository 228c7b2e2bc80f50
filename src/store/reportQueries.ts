// The report's reads, as the SQL text the Markdown prints (docs/reports.md): one text for both engines, an
// engine's variant (same rows) only where measured (pg/reportQueries.ts, reportQueries/sqliteVariants.ts).
// Long results come in batches: one-row batches cost the 1M-record month ~30% more CPU than 512-row ones.
import type Database from "better-sqlite3";
import type { ChainHead } from "../headSignatures.ts";
import type { CopiedColumns } from "./chainRead.ts";
import { sqliteOf } from "./connection.ts";
import { ENTITY_REPORT_QUERIES } from "./entityReportQueries.ts";
import { type AnyStore, pgSide } from "./openAny.ts";
import { CHANGES_CSV_SQL, type ChangeCsvRow } from "./reportQueries/changesCsv.ts";
import { COMPLETENESS_QUERIES } from "./reportQueries/completeness.ts";
import { CONTROL_QUERIES } from "./reportQueries/controls.ts";
import { ENTITY_SECTION_QUERIES } from "./reportQueries/entities.ts";
import { MUTATION_QUERIES } from "./reportQueries/mutations.ts";
import { OVERVIEW_QUERIES } from "./reportQueries/overview.ts";
import { REVIEW_QUERIES } from "./reportQueries/reviews.ts";
import type { ReportRows } from "./reportQueries/rows.ts";
import { SQLITE_VARIANTS } from "./reportQueries/sqliteVariants.ts";

export { UNPLACED_RECORDS_SQL } from "./reportQueries/completeness.ts";
export type * from "./reportQueries/rows.ts";

/** Every query of the report by name, one text for both engines; each section's are in src/store/reportQueries/. */
export const QUERIES = {
  ...ENTITY_SECTION_QUERIES,
  ...OVERVIEW_QUERIES,
  ...COMPLETENESS_QUERIES,
  ...REVIEW_QUERIES,
  ...MUTATION_QUERIES,
  ...ENTITY_REPORT_QUERIES,
  ...CONTROL_QUERIES,
} as const;

export type ReportQueryName = keyof typeof QUERIES;

/** What the report asks about; bindParams turns it into the queries' parameters (@start, @types…). */
export interface ReportParams {
  /** The period, [start, end) in epoch ms. */
  start: number;
  end: number;
  /** Only these action types; null for all. */
  actionTypes: readonly string[] | null;
  /** The period's days in the report's zone, each with its bounds. */
  days: readonly { day: string; start: number; end: number }[];
  /** The review rules' lists (src/report/reviews.ts). */
  rejects: readonly string[];
  exempt: readonly string[];
  flows: readonly Readonly<Record<"entity" | "create" | "accept" | "reject" | "delete", string>>[];
  /** How long an approval covers the next change, in ms (@reviewStart = @start - @reviewWindow). */
  reviewWindow: number;
  /** The first and last server day the period overlaps; null when the store has no dated records. */
  serverFromDay: string | null;
  serverToDay: string | null;
}

/** Lists are bound as JSON text, a null @types as NULL (every action type). */
export function bindParams(p: ReportParams): Record<string, unknown> {
  return {
    start: p.start,
    end: p.end,
    types: p.actionTypes ? JSON.stringify(p.actionTypes) : null,
    days: JSON.stringify(p.days),
    rejects: JSON.stringify(p.rejects),
    exempt: JSON.stringify(p.exempt),
    flows: JSON.stringify(p.flows),
    reviewWindow: p.reviewWindow,
    reviewStart: p.start - p.reviewWindow,
    serverFromDay: p.serverFromDay,
    serverToDay: p.serverToDay,
  };
}

/** The named parameters a query uses, in the order it first uses them. */
export function paramsFor(sql: string, all: Record<string, unknown>): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const match of sql.matchAll(/@([A-Za-z]+)/g)) {
    const name = match[1]!;
    picked[name] = all[name] ?? null;
  }
  return picked;
}

/** A query's one text (or its variant in `variants`: same rows) and the values it binds. */
export function reportQuery(
  name: ReportQueryName,
  params: ReportParams,
  variants: Partial<Record<ReportQueryName, string>> = {},
): { sql: string; params: Record<string, unknown> } {
  const sql = variants[name] ?? QUERIES[name];
  return { sql, params: paramsFor(sql, bindParams(params)) };
}

/** How many rows a stream hands over at a time. */
export const BATCH_ROWS = 512;

export type TimeTexts = Pick<CopiedColumns, "date_text" | "time_text">;

/** The snapshot's own small reads, one text for both engines (@instant: epoch ms). */
export const SNAPSHOT_READS = {
  chainHead: `SELECT seq, chain_hash AS "chainHash" FROM audit_logs ORDER BY seq DESC LIMIT 1`,
  storedRecords: "SELECT count(*) AS n FROM audit_logs",
  // The stored record at or before the instant, then the one after it.
  timeTextsNear: `SELECT date_text, time_text FROM (
  SELECT date_text, time_text FROM audit_logs WHERE occurred_at <= @instant ORDER BY occurred_at DESC LIMIT 1) earlier
UNION ALL SELECT date_text, time_text FROM (
  SELECT date_text, time_text FROM audit_logs WHERE occurred_at > @instant ORDER BY occurred_at LIMIT 1) later`,
};

/** The report's reads, all from one snapshot of the store. */
export interface ReportSnapshot {
  /** Every row of a query with a small result. */
  rows<N extends ReportQueryName>(name: N, params: ReportParams): Promise<ReportRows[N][]>;
  /**
   * These queries will be asked for after a long read: PostgreSQL starts them now, on a second session of
   * the snapshot. Resolves when the snapshot can take the next request, not when the reads are done.
   */
  ahead?(names: readonly ReportQueryName[], params: ReportParams): Promise<void>;
  /** The rows of a query with a long result, in order, a batch at a time (bounded memory). */
  batches<N extends ReportQueryName>(name: N, params: ReportParams): AsyncIterable<readonly ReportRows[N][]>;
  /** The rows of experimentStateChangesCsv, configEditsCsv and unreviewedCsv in one read (changesCsv.ts). */
  changes(params: ReportParams): AsyncIterable<readonly ChangeCsvRow[]>;
  /** The newest record's place in the hash chain; null for an empty store. */
  chainHead(): Promise<ChainHead | null>;
  /** Every record stored, whatever its time. */
  storedRecords(): Promise<number>;
  /** The date and time texts of the stored records nearest an instant: the one at or before, then after. */
  timeTextsNear(instant: number): Promise<TimeTexts[]>;
}

/**
 * A statement's rows in batches, as objects made here from better-sqlite3's raw arrays: its own cost ~20 %
 * of the 1M-record month's CSV queries' CPU. Starts at the first batch: an unread stream holds nothing open.
 */
async function* batchesOf<Row>(
  statement: Database.Statement,
  params: Record<string, unknown>,
): AsyncGenerator<Row[]> {
  const names = statement.columns().map((column) => column.name);
  const rows = statement.raw(true).iterate(params) as IterableIterator<unknown[]>;
  try {
    for (;;) {
      const batch: Row[] = [];
      for (let next = rows.next(); !next.done; next = rows.next()) {
        const row: Record<string, unknown> = {};
        for (let i = 0; i < names.length; i += 1) row[names[i]!] = next.value[i];
        batch.push(row as Row);
        if (batch.length === BATCH_ROWS) break;
      }
      if (batch.length === 0) return;
      yield batch;
    }
  } finally {
    // A consumer that stops early must not leave the statement open inside the read transaction.
    rows.return?.();
  }
}

function snapshotOf(sqlite: Database.Database): ReportSnapshot {
  return {
    rows: async <N extends ReportQueryName>(name: N, params: ReportParams) => {
      const { sql, params: bound } = reportQuery(name, params, SQLITE_VARIANTS);
      return sqlite.prepare(sql).all(bound) as ReportRows[N][];
    },
    batches: <N extends ReportQueryName>(name: N, params: ReportParams) => {
      const { sql, params: bound } = reportQuery(name, params, SQLITE_VARIANTS);
      return batchesOf<ReportRows[N]>(sqlite.prepare(sql), bound);
    },
    changes: (params: ReportParams) =>
      batchesOf<ChangeCsvRow>(
        sqlite.prepare(CHANGES_CSV_SQL),
        paramsFor(CHANGES_CSV_SQL, bindParams(params)),
      ),
    chainHead: async () => (sqlite.prepare(SNAPSHOT_READS.chainHead).get() as ChainHead | undefined) ?? null,
    storedRecords: async () => sqlite.prepare(SNAPSHOT_READS.storedRecords).pluck().get() as number,
    timeTextsNear: async (instant: number) =>
      sqlite.prepare(SNAPSHOT_READS.timeTextsNear).all({ instant }) as TimeTexts[],
  };
}

/** The report's page cache, in KiB as `PRAGMA cache_size` takes it (negative). */
const REPORT_CACHE_KIB = -2_000;

/** Runs `read` in one read transaction: every file of a report describes one snapshot, even during a sync. */
export async function readReportSnapshot<T>(store: AnyStore, read: (snapshot: ReportSnapshot) => Promise<T>) {
  if (store.engine === "postgres") return (await pgSide()).readPgReportSnapshot(store, read);
  const sqlite = sqliteOf(store);
  const cache = sqlite.pragma("cache_size", { simple: true }) as number;
  // SQLite's default page cache, not better-sqlite3's 16 MB: the 1M-record month's peak RSS 138 → 120 MB,
  // no CPU lost (the OS caches the file). The sorter's follows it: above 4 MB a sort goes to a temp file.
  const capped = cache < REPORT_CACHE_KIB;
  if (capped) sqlite.pragma(`cache_size = ${REPORT_CACHE_KIB}`);
  const ownTransaction = !sqlite.inTransaction;
  if (ownTransaction) sqlite.prepare("BEGIN").run();
  try {
    return await read(snapshotOf(sqlite));
  } finally {
    if (ownTransaction) sqlite.prepare("COMMIT").run();
    if (capped) sqlite.pragma(`cache_size = ${cache}`);
  }
}
