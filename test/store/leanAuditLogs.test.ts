// audit_logs keeps one copy of a record (issue 25, migration 0011): the columns that repeat its fields are
// virtual, read from `raw_data` (the record's text) with the values the writer used to store; `raw` gives back the very
// text; the hashes are bytes shown as hex. 0011 upgrades a store in place without losing or changing a row.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { DIFF_VERSION, diffRecordChanges } from "../../src/diff/rules.ts";
import { CHAIN_GENESIS, chainLink } from "../../src/hash.ts";
import { prepareRecords } from "../../src/records/prepare.ts";
import { beginBulkLoad, finishBulkLoad } from "../../src/store/bulkLoad.ts";
import { sqliteOf } from "../../src/store/connection.ts";
import { openStore } from "../../src/store/open.ts";
import { ruleChangeColumns } from "../../src/store/ruleDiffs.ts";
import { verifyStore } from "../../src/verify/store.ts";
import { makeRecord } from "../helpers/auditRecords.ts";
import { storeMigratedTo } from "../helpers/migrations.ts";
import { createRecordWriter, writeDigests } from "../helpers/storeFixtures.ts";

const AT = Date.UTC(2024, 2, 10, 12, 0, 0);
const DOCUMENTED = `id, name, action_type, change_log, updated_by, updated_by_user_id, modifier_email, occurred_at,
  server_day, date_text, time_text, tags, changes, raw, record_hash, seq, chain_hash, first_seen_at, sync_run_id`;
const FROM_RAW = [
  "action_type",
  "change_log",
  "chain_hash",
  "changes",
  "date_text",
  "id",
  "modifier_email",
  "name",
  "raw",
  "record_hash",
  "tags",
  "time_text",
  "updated_by",
  "updated_by_user_id",
];

/** Records with what a copy could get wrong: an object e-mail, unicode, escapes, nulls, numbers. */
function trickyRecords() {
  return [
    {
      ...makeRecord(AT, { tags: ["prod", 'ünï "q"'] }),
      modifierEmail: { primary: "a@x.io", n: 1 },
      changeLog: 'tab\there, newline\n, quote " backslash \\ control \u0001 ✓ \ud83d\ude00',
    },
    { ...makeRecord(AT + 1000), tags: null, modifierEmail: undefined, updatedByUserID: undefined },
    {
      ...makeRecord(AT + 2000, { actionType: "config_rules_update", tags: [] }),
      extra: { big: 1e21, small: 5e-7, negative: -0.5, lone: "\ud800", line: "\u2028" },
    },
    // Dates of another form, with two blanks, a wrong weekday, a day that does not exist.
    makeRecord(AT + 3000, { date: "Sunday, March 10, 2024", modifierEmail: "" }),
    makeRecord(AT + 4000, { date: "Sun  Mar 10 2024" }),
    makeRecord(AT + 5000, { date: "Mon Mar 10 2024" }),
    makeRecord(AT + 6000, { date: "Thu Feb 30 2024", time: "no time" }),
    { ...makeRecord(AT + 7000), updatedByUserID: null, modifierEmail: null, updatedBy: null },
  ];
}

function documentedRows(sqlite: Database.Database) {
  return sqlite.prepare(`SELECT ${DOCUMENTED} FROM audit_logs ORDER BY seq`).all();
}

describe("audit_logs", () => {
  it("stores no copy of the fields it reads from the record, and reads the values the writer stored before", async () => {
    const store = openStore(":memory:");
    try {
      // table_xinfo's `hidden` is 2 for a virtual generated column.
      const columns = sqliteOf(store).prepare("PRAGMA table_xinfo(audit_logs)").all() as {
        name: string;
        hidden: number;
      }[];
      expect(columns.filter((c) => c.hidden === 2).map((c) => c.name)).toEqual(
        expect.arrayContaining(FROM_RAW),
      );
      expect(columns.filter((c) => c.hidden === 2)).toHaveLength(FROM_RAW.length);

      const records = trickyRecords();
      await createRecordWriter(store).writePage(records, { syncRunId: null, now: 1 });
      const prepared = prepareRecords(records);
      const rows = documentedRows(sqliteOf(store)) as Record<string, unknown>[];
      expect(rows).toHaveLength(records.length);
      for (const [i, p] of prepared.entries()) {
        if (!p.valid) throw new Error("a test record failed validation");
        const c = p.columns;
        expect(rows[i]).toMatchObject({
          id: c.id,
          name: c.name,
          action_type: c.actionType,
          change_log: c.changeLog,
          updated_by: c.updatedBy,
          updated_by_user_id: c.updatedByUserId,
          modifier_email: c.modifierEmail,
          occurred_at: c.occurredAt,
          server_day: c.serverDay,
          date_text: c.dateText,
          time_text: c.timeText,
          tags: c.tags,
          // The very text, byte for byte.
          raw: c.raw,
          record_hash: c.recordHash,
        });
      }
      expect(rows[0]).toMatchObject({
        modifier_email: '{"primary":"a@x.io","n":1}',
        tags: '["prod","ünï \\"q\\""]',
      });
      // The writer's server day, stored: none where the date text has no day it can read.
      expect(rows.slice(3).map((r) => r.server_day)).toEqual([
        "2024-03-10",
        "2024-03-10",
        null,
        null,
        "2024-03-10",
      ]);
      expect(
        sqliteOf(store)
          .prepare("SELECT DISTINCT typeof(raw_data), length(record_hash_bytes) FROM audit_logs")
          .raw()
          .all(),
      ).toEqual([["text", 32]]);
    } finally {
      store.close();
    }
  });

  it("dedupes on id during a bulk load (its unique index is kept) and finishes one whose indexes a migration made again", async () => {
    const store = openStore(":memory:");
    try {
      const sqlite = sqliteOf(store);
      expect(await beginBulkLoad(store)).toBe(true);
      const writer = createRecordWriter(store);
      const record = makeRecord(AT, { changes: { rules: { old: [], new: [{ id: "r" }] } } });
      expect((await writer.writePage([record], { syncRunId: null, now: 1 })).inserted).toBe(1);
      // Its rule diff is written during the load too (the rows' index is set aside until the end).
      expect(indexesOf(sqlite)).not.toHaveProperty("rule_changes_audit_log_id_idx");
      expect(sqlite.prepare("SELECT new_value FROM rule_changes").pluck().all()).toEqual(['{"id":"r"}']);
      expect(await writer.writePage([record], { syncRunId: null, now: 1 })).toMatchObject({
        inserted: 0,
        duplicates: 1,
      });
      sqlite.exec("CREATE INDEX `audit_logs_name_idx` ON `audit_logs` (`name`)");
      expect(await finishBulkLoad(store)).toBe(true);
      const names = sqlite
        .prepare(
          "SELECT name FROM sqlite_master WHERE tbl_name = 'audit_logs' AND type = 'index' ORDER BY name",
        )
        .pluck()
        .all();
      expect(names).toEqual([
        "audit_logs_action_type_idx",
        "audit_logs_id_idx",
        "audit_logs_name_idx",
        "audit_logs_occurred_at_idx",
        "audit_logs_server_day_idx",
      ]);
      expect(indexesOf(sqlite)).toMatchObject({ rule_changes_audit_log_id_idx: ["audit_log_id"] });
      const found = sqlite
        .prepare("SELECT count(*) FROM audit_logs_fts WHERE audit_logs_fts MATCH 'updated'")
        .pluck()
        .get();
      expect(found).toBe(1);
    } finally {
      store.close();
    }
  });
});

describe("a bulk load", () => {
  it("leaves no free page: the full-text rebuild's merged-away segments are reused by the indexes built after it", async () => {
    const store = openStore(":memory:");
    try {
      const sqlite = sqliteOf(store);
      // A small in-memory term table, so that a few hundred records make the rebuild flush and merge
      // segments as a large backfill does (50,000 records left 17 free pages of 16 KB).
      sqlite.exec("INSERT INTO audit_logs_fts (audit_logs_fts, rank) VALUES ('hashsize', 512)");
      expect(await beginBulkLoad(store)).toBe(true);
      const records = Array.from({ length: 400 }, (_, i) =>
        makeRecord(AT + i * 1000, { changeLog: `Changed setting ${i} of word${i % 50}` }),
      );
      await createRecordWriter(store).writePage(records, { syncRunId: null, now: 1 });
      expect(await finishBulkLoad(store)).toBe(true);
      expect(sqlite.pragma("freelist_count", { simple: true })).toBe(0);
      const found = sqlite
        .prepare("SELECT count(*) FROM audit_logs_fts WHERE audit_logs_fts MATCH 'word7'")
        .pluck()
        .get();
      expect(found).toBe(8);
    } finally {
      store.close();
    }
  });
});

/** A store file at migration 0010, filled by the writer of then (every column stored). */
function storeBefore0011(path: string, records: readonly unknown[]): void {
  const sqlite = storeMigratedTo(path, 10);
  try {
    const insert = sqlite.prepare(
      `INSERT INTO audit_logs (id, name, action_type, change_log, updated_by, updated_by_user_id,
         modifier_email, occurred_at, server_day, date_text, time_text, tags, raw, record_hash,
         seq, chain_hash, first_seen_at, sync_run_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    let chain = CHAIN_GENESIS;
    for (const [i, p] of prepareRecords(records).entries()) {
      if (!p.valid) throw new Error("a test record failed validation");
      const c = p.columns;
      chain = chainLink(chain, c.recordHash);
      insert.run(
        [c.id, c.name, c.actionType, c.changeLog, c.updatedBy, c.updatedByUserId, c.modifierEmail],
        [c.occurredAt, c.serverDay, c.dateText, c.timeText, c.tags, c.raw, c.recordHash],
        [i + 1, chain, 7, null],
      );
      // A row referencing it: the foreign key must hold again after the table is made anew.
      sqlite
        .prepare("INSERT INTO listed_days (audit_log_id, day) VALUES (?, ?)")
        .run(c.id, c.serverDay ?? "2024-03-10");
    }
    const meta = sqlite.prepare("INSERT INTO meta (key, value) VALUES (?, ?)");
    meta.run("chain_head_seq", String(records.length));
    meta.run("chain_head_hash", chain);
    // As every sync leaves them.
    writeDigests(sqlite);
  } finally {
    sqlite.close();
  }
}

describe("migration 0011", () => {
  it("upgrades a store in place: the same rows, the same chain head, verify passes, search works", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "flagtrail-0011-")), "store.db");
    const records = [
      ...trickyRecords(),
      ...Array.from({ length: 20 }, (_, i) => makeRecord(AT + 10_000 * (i + 1))),
    ];
    storeBefore0011(path, records);
    const old = new Database(path, { readonly: true });
    const before = documentedRows(old);
    const beforeSearch = old
      .prepare("SELECT rowid FROM audit_logs_fts WHERE audit_logs_fts MATCH 'newline'")
      .pluck()
      .all();
    old.close();
    expect(before).toHaveLength(records.length);

    const store = openStore(path);
    try {
      const sqlite = sqliteOf(store);
      expect(documentedRows(sqlite)).toEqual(before);
      expect(
        sqlite.prepare("SELECT rowid FROM audit_logs_fts WHERE audit_logs_fts MATCH 'newline'").pluck().all(),
      ).toEqual(beforeSearch);
      expect(beforeSearch).toEqual([1]);
      expect(sqlite.prepare("SELECT count(*) FROM listed_days").pluck().get()).toBe(records.length);
      expect(sqlite.pragma("foreign_key_check")).toEqual([]);
      const check = await verifyStore(store);
      expect(check.records).toBe(records.length);
      expect(check.head).toEqual({
        seq: records.length,
        chainHash: (before.at(-1) as { chain_hash: string }).chain_hash,
      });
      // The next record links onto the migrated chain.
      await createRecordWriter(store).writePage([makeRecord(AT + 999_999)], { syncRunId: null, now: 1 });
      expect((await verifyStore(store)).records).toBe(records.length + 1);
    } finally {
      store.close();
    }
  });
});

/** audit_logs' and rule_changes' indexes as SQLite has them: name and indexed columns. */
function indexesOf(sqlite: Database.Database): Record<string, string[]> {
  const names = sqlite
    .prepare(
      `SELECT name FROM sqlite_master WHERE type = 'index'
         AND tbl_name IN ('audit_logs', 'rule_changes')
         AND sql IS NOT NULL ORDER BY name`,
    )
    .pluck()
    .all() as string[];
  return Object.fromEntries(
    names.map((name) => [
      name,
      sqlite.prepare("SELECT name FROM pragma_index_info(?) ORDER BY seqno").pluck().all(name) as string[],
    ]),
  );
}

const INDEXES_0012 = {
  audit_logs_action_type_idx: ["action_type", "occurred_at", "name", "updated_by", "id"],
  audit_logs_id_idx: ["id"],
  audit_logs_name_idx: ["name"],
  audit_logs_occurred_at_idx: ["occurred_at"],
  audit_logs_server_day_idx: ["server_day"],
  rule_changes_audit_log_id_idx: ["audit_log_id"],
};

/** A store file at migration `last` (0011 to 0014) holding `records` as their writer stored them, rule diffs too. */
function storeAt0011(path: string, records: readonly unknown[], last = 11): Database.Database {
  const sqlite = storeMigratedTo(path, last);
  const insert = sqlite.prepare(
    `INSERT INTO audit_logs (raw_data, updated_by_user_id, modifier_email, occurred_at, server_day,
       record_hash_bytes, seq, chain_hash_bytes, first_seen_at, sync_run_id)
     VALUES (?, ?, ?, ?, ?, unhex(?), ?, unhex(?), ?, ?)`,
  );
  const insertChange = sqlite.prepare(
    `INSERT INTO rule_changes (audit_log_id, rule_id, rule_name, change, field, old_value, new_value,
       old_position, new_position) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertSummary = sqlite.prepare(
    "INSERT INTO rule_diff_summaries (audit_log_id, summary, diff_version) VALUES (?, ?, ?)",
  );
  let chain = CHAIN_GENESIS;
  for (const [i, p] of prepareRecords(records).entries()) {
    if (!p.valid) throw new Error("a test record failed validation");
    const c = p.columns;
    chain = chainLink(chain, c.recordHash);
    insert.run(
      [c.raw, c.updatedByUserId, c.modifierEmail, c.occurredAt, c.serverDay, c.recordHash],
      [i + 1, chain, 7, null],
    );
    // Its rule diff, as the writer stores it with the record.
    const diff = diffRecordChanges((JSON.parse(c.raw) as { changes?: unknown }).changes);
    if (diff === null) continue;
    for (const change of diff.changes) insertChange.run(c.id, ...ruleChangeColumns(change));
    insertSummary.run(c.id, diff.summary, DIFF_VERSION);
  }
  const meta = sqlite.prepare("INSERT INTO meta (key, value) VALUES (?, ?)");
  meta.run("chain_head_seq", String(records.length));
  meta.run("chain_head_hash", chain);
  writeDigests(sqlite);
  return sqlite;
}

describe("migration 0012", () => {
  it("drops the covering index's copy of seq and the unread rule_id index in place: rows, search, chain and plans unchanged", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "flagtrail-0012-")), "store.db");
    const rules = (percentagePass: number) => [{ id: "rule1", name: "Beta", percentagePass }];
    const records = [
      ...trickyRecords(),
      makeRecord(AT + 5000, { changes: { rules: { old: rules(10), new: rules(20) } } }),
      ...Array.from({ length: 20 }, (_, i) => makeRecord(AT + 10_000 * (i + 1))),
    ];
    const old = storeAt0011(path, records);
    const before = documentedRows(old);
    const search = "SELECT rowid FROM audit_logs_fts WHERE audit_logs_fts MATCH 'newline OR updated'";
    const beforeSearch = old.prepare(search).pluck().all();
    const ruleChanges = "SELECT * FROM rule_changes ORDER BY id";
    const beforeRuleChanges = old.prepare(ruleChanges).all();
    expect(beforeRuleChanges).toHaveLength(1);
    expect(indexesOf(old)).toMatchObject({
      audit_logs_action_type_idx: ["action_type", "occurred_at", "seq", "name", "updated_by", "id"],
      rule_changes_rule_id_idx: ["rule_id"],
    });
    old.close();
    expect(beforeSearch).toHaveLength(records.length);

    const store = openStore(path);
    try {
      const sqlite = sqliteOf(store);
      expect(indexesOf(sqlite)).toEqual(INDEXES_0012);
      expect(documentedRows(sqlite)).toEqual(before);
      expect(sqlite.prepare(search).pluck().all()).toEqual(beforeSearch);
      expect(sqlite.prepare(ruleChanges).all()).toEqual(beforeRuleChanges);
      // The report's reads of a category's records still search the covering index (seq is its rowid).
      const plan = sqlite
        .prepare(
          `EXPLAIN QUERY PLAN SELECT seq, id, name, updated_by FROM audit_logs
           WHERE action_type = 'gate_update' AND occurred_at >= 0 AND occurred_at < ${AT * 2}`,
        )
        .all() as { detail: string }[];
      expect(plan.map((row) => row.detail)).toEqual([
        "SEARCH audit_logs USING INDEX audit_logs_action_type_idx (action_type=? AND occurred_at>? AND occurred_at<?)",
      ]);
      const check = await verifyStore(store);
      expect(check.records).toBe(records.length);
      expect(check.head).toEqual({
        seq: records.length,
        chainHash: (before.at(-1) as { chain_hash: string }).chain_hash,
      });
    } finally {
      store.close();
    }
  });

  it("takes both indexes off the list of a bulk load killed half-way, which then builds the new ones", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "flagtrail-0012-bulk-")), "store.db");
    const old = storeAt0011(path, [makeRecord(AT), makeRecord(AT + 1000)]);
    // What beginBulkLoad of then set aside (src/store/bulkLoad.ts), dropped and listed in meta.
    const kept = ["audit_logs_id_idx", "audit_logs_fts_after_delete", "audit_logs_fts_after_update"];
    const setAside = (
      old
        .prepare(
          `SELECT type, name, sql FROM sqlite_master WHERE tbl_name IN ('audit_logs', 'rule_changes')
             AND type IN ('index', 'trigger') AND sql IS NOT NULL`,
        )
        .all() as { type: string; name: string }[]
    ).filter((item) => !kept.includes(item.name));
    expect(setAside.map((item) => item.name)).toContain("rule_changes_rule_id_idx");
    for (const item of setAside) old.exec(`DROP ${item.type.toUpperCase()} "${item.name}"`);
    old.prepare("INSERT INTO meta (key, value) VALUES ('bulk_load', ?)").run(JSON.stringify(setAside));
    old.close();

    const store = openStore(path);
    try {
      expect(await finishBulkLoad(store)).toBe(true);
      expect(indexesOf(sqliteOf(store))).toEqual(INDEXES_0012);
      expect(
        sqliteOf(store)
          .prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name")
          .pluck()
          .all(),
      ).toEqual([
        "audit_logs_fts_after_delete",
        "audit_logs_fts_after_insert",
        "audit_logs_fts_after_update",
      ]);
    } finally {
      store.close();
    }
  });
});

describe("migration 0015", () => {
  it("reads updated_by_user_id and modifier_email from the record in place: every row, search and chain as before", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "flagtrail-0015-")), "store.db");
    const rules = (percentagePass: number) => [{ id: "rule1", name: "Beta", percentagePass }];
    // A rule edit with a rule removed and one added.
    const gone = { id: "gone", name: 'Old "ünï" ✓', conditionJSON: [{ type: "x", value: [1, 2.5, null] }] };
    const fresh = { id: "fresh", name: "New", returnValueJSON: '{"a":1e21}', percentagePass: 0.5 };
    const edit = { old: [...rules(10), gone], new: [fresh, ...rules(20)] };
    const records = [
      ...trickyRecords(),
      makeRecord(AT + 9000, { changes: { rules: edit } }),
      // Rules that are scalars: their values stay texts ('5', not 5).
      makeRecord(AT + 9400, { changes: { rules: { old: [], new: [5, 2.5] } } }),
      makeRecord(AT + 9500, { changes: { rules: { old: [9], new: [] } } }),
      ...Array.from({ length: 20 }, (_, i) => makeRecord(AT + 10_000 * (i + 1))),
    ];
    const old = storeAt0011(path, records, 14);
    const ruleChanges = "SELECT * FROM rule_changes ORDER BY id";
    const beforeRuleChanges = old.prepare(ruleChanges).all() as { change: string }[];
    expect(new Set(beforeRuleChanges.map((r) => r.change))).toEqual(
      new Set(["added", "modified", "removed"]),
    );
    // The scalar rules' values are texts, as the writer stored them.
    const types =
      "SELECT typeof(old_value) FROM rule_changes UNION SELECT typeof(new_value) FROM rule_changes";
    expect(old.prepare(types).pluck().all().sort()).toEqual(["null", "text"]);
    const summaries = "SELECT * FROM rule_diff_summaries ORDER BY audit_log_id";
    const beforeSummaries = old.prepare(summaries).all();
    expect(beforeSummaries).toHaveLength(3);
    // A day stored apart from what the date text says (as a fixture or an older writer may have): kept.
    const day10 = old.prepare("SELECT server_day FROM audit_logs WHERE seq = 10").pluck().get();
    old.prepare("UPDATE audit_logs SET server_day = '2001-02-03' WHERE seq = 10").run();
    const before = documentedRows(old);
    const search = "SELECT rowid FROM audit_logs_fts WHERE audit_logs_fts MATCH 'newline OR updated'";
    const beforeSearch = old.prepare(search).pluck().all();
    old.close();
    expect(before.map((r) => (r as { server_day: unknown }).server_day)).toContain("2001-02-03");

    const store = openStore(path);
    try {
      const sqlite = sqliteOf(store);
      expect(documentedRows(sqlite)).toEqual(before);
      expect(sqlite.prepare(ruleChanges).all()).toEqual(beforeRuleChanges);
      expect(sqlite.prepare(summaries).all()).toEqual(beforeSummaries);
      // No second copy of the summaries' key: the table is its b-tree.
      expect(
        sqlite.prepare("SELECT sql FROM sqlite_master WHERE name = 'rule_diff_summaries'").pluck().get(),
      ).toMatch(/WITHOUT ROWID$/);
      expect(sqlite.prepare(search).pluck().all()).toEqual(beforeSearch);
      sqlite.prepare("INSERT INTO audit_logs_fts (audit_logs_fts, rank) VALUES ('integrity-check', 1)").run();
      expect(sqlite.pragma("foreign_key_check")).toEqual([]);
      expect(indexesOf(sqlite)).toEqual(INDEXES_0012);
      await expect(verifyStore(store)).rejects.toThrow(/seq 10 .*column server_day differs/);
      sqlite.prepare("UPDATE audit_logs SET server_day = ? WHERE seq = 10").run(day10);
      const check = await verifyStore(store);
      expect(check).toMatchObject({ records: records.length, ruleDiffs: 3 });
      // New rule diffs; verify recomputes them and compares every value.
      const next = makeRecord(AT + 999_999, { changes: { rules: { old: edit.new, new: edit.old } } });
      const scalars = makeRecord(AT + 999_000, { changes: { rules: { old: [9], new: [] } } });
      await createRecordWriter(store).writePage([next, scalars], { syncRunId: null, now: 1 });
      expect(await verifyStore(store)).toMatchObject({ records: records.length + 2, ruleDiffs: 5 });
      expect(sqlite.prepare(types).pluck().all().sort()).toEqual(["null", "text"]);
    } finally {
      store.close();
    }
  });
});
