// The batch writer on both engines, record by record: the same pages committed through the store
// boundary into SQLite and into PostgreSQL give the same counters and warnings and the same rows —
// duplicates and revisions within one page, quarantine seen twice and narrowed to a smaller day range,
// a record with an unreadable time, rule diffs, listed days, the chain and the digests; a page large
// enough for PostgreSQL's COPY, with a record of the same batch revised in it.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prepareRecords } from "../../src/records/prepare.ts";
import { sqliteOf } from "../../src/store/connection.ts";
import {
  type BatchPage,
  commitSyncBatch,
  openStore,
  type RunCounters,
  type Store,
  startRun,
} from "../../src/store/syncStore.ts";
import { makeRecord } from "../helpers/auditRecords.ts";
import { freshDatabase, queryOnce } from "./cluster.ts";

const int8Parser = pg.types.getTypeParser(pg.types.builtins.INT8);
pg.types.setTypeParser(pg.types.builtins.INT8, Number);
// Put back for the worker's next file (test/leakGuard.ts): the store's own connections set their types.
afterAll(() => pg.types.setTypeParser(pg.types.builtins.INT8, int8Parser));

const AT = Date.UTC(2024, 2, 10, 12, 0, 0);
const DAY = 86_400_000;
const rules = (percent: number) => ({
  rules: {
    old: [{ id: "r1", groupName: "Everyone", percentagePass: 10, conditionJSON: [] }],
    new: [{ id: "r1", groupName: "Everyone", percentagePass: percent, conditionJSON: [] }],
  },
});

const a = makeRecord(AT, { changes: rules(50) });
const b = makeRecord(AT + 1000, { tags: ["prod", "★"] });
const c = makeRecord(AT + 2000);
const edited = { ...c, changeLog: "edited in place" };
const noName = { ...makeRecord(AT + 3000), name: undefined };
const badDate = { ...makeRecord(AT + 4000), date: "", actionType: 7 };
const oddTime = makeRecord(AT + 5000, { time: "not a time" });
const later = makeRecord(AT + DAY, { changes: rules(75) });
// Enough new records for PostgreSQL's COPY path (32 or more), with COPY's special characters in a column.
const many = Array.from({ length: 40 }, (_, i) =>
  makeRecord(AT + 2 * DAY + i * 1000, {
    changeLog: `tab\tnewline\ncr\r backslash\\ \\N \\. #${i}`,
    ...(i % 10 === 0 ? { changes: rules(i) } : {}),
  }),
);

/** The batch's pages, prepared afresh for each store (the same records). */
function pages(): BatchPage[] {
  const page = (records: unknown[], from: string, to: string, extra: Partial<BatchPage> = {}): BatchPage => ({
    prepared: prepareRecords(records),
    requestPath: `/console/v1/audit_logs?startDate=${from}&endDate=${to}`,
    dayRange: { from, to },
    ...extra,
  });
  return [
    page([a, b, a, c, edited, noName, noName, badDate, oddTime], "2024-03-01", "2024-03-20"),
    // Seen again in narrower requests: the unreadable date's range narrows; the edit is no new revision.
    page([badDate, edited, b], "2024-03-05", "2024-03-15"),
    page([badDate, later], "2024-03-08", "2024-03-12", { listedDay: "2024-03-12" }),
    // A new record of the batch seen again in a later page, edited: a revision of a row not stored before.
    page([...many, { ...many[0], changeLog: "edited after" }, later], "2024-03-12", "2024-03-20"),
  ];
}

const zero: RunCounters = {
  fetched: 0,
  inserted: 0,
  duplicates: 0,
  mutations: 0,
  quarantined: 0,
  warnings: 0,
  requests: 0,
  throttled: 0,
  retries: 0,
};

const QUERIES = [
  // The documented columns (SQLite's also holds its storage of them: raw_data and the hashes' bytes).
  `SELECT id, name, action_type, change_log, updated_by, updated_by_user_id, modifier_email, occurred_at,
     server_day, date_text, time_text, tags, raw, record_hash, seq, chain_hash, first_seen_at, sync_run_id,
     changes
   FROM audit_logs ORDER BY seq`,
  "SELECT * FROM audit_log_revisions ORDER BY id",
  "SELECT * FROM quarantine ORDER BY id",
  "SELECT * FROM rule_changes ORDER BY id",
  "SELECT * FROM rule_diff_summaries ORDER BY audit_log_id {C}",
  "SELECT * FROM listed_days ORDER BY audit_log_id {C}",
  "SELECT key, value FROM meta WHERE key LIKE 'chain%' OR key = 'rule_diffs_backfilled' ORDER BY key {C}",
  "SELECT fetched, inserted, duplicates, mutations, quarantined, warnings FROM sync_runs",
];

let lite: Store;
let pgStore: Store;
let url: string;

beforeAll(async () => {
  url = await freshDatabase("batch");
  lite = await openStore(":memory:");
  pgStore = await openStore(url);
});
afterAll(async () => {
  await lite?.close();
  await pgStore?.close();
});

describe("commitSyncBatch on PostgreSQL", () => {
  it("writes what SQLite writes, and returns the same counters", async () => {
    const results = [];
    for (const store of [lite, pgStore]) {
      const runId = await startRun(store, { filterKey: "all", params: {}, now: AT });
      results.push(
        await commitSyncBatch(store, {
          plan: null,
          runId,
          pages: pages(),
          counters: zero,
          now: AT + 7 * DAY,
          signingKey: "k",
        }),
      );
    }
    const [onLite, onPg] = results;
    expect(onLite?.counters).toMatchObject({
      fetched: 56,
      inserted: 45,
      mutations: 2,
      quarantined: 2,
      warnings: 1,
    });
    expect(onPg).toEqual(onLite);
    if (lite.engine !== "sqlite") throw new Error("expected SQLite");
    for (const query of QUERIES) {
      const liteRows = sqliteOf(lite).prepare(query.replaceAll("{C}", "")).all();
      const pgRows = await queryOnce(url, query.replaceAll("{C}", 'COLLATE "C"'));
      expect(pgRows, query).toEqual(liteRows);
    }
    const [narrowed] = await queryOnce<{ day_min: string; day_max: string }>(
      url,
      "SELECT day_min, day_max FROM quarantine WHERE server_day IS NULL",
    );
    expect(narrowed).toEqual({ day_min: "2024-03-08", day_max: "2024-03-12" });
    expect(await queryOnce(url, "SELECT count(*)::int AS n FROM rule_changes")).toEqual([{ n: 5 }]);
  });
});
