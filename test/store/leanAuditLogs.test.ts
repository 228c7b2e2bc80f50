// audit_logs keeps one copy of a record (issue 25, migration 0011): the columns that repeat its fields are
// virtual, read from `raw_data` (the record's text) with the values the writer used to store; `raw` gives back the very
// text; the hashes are bytes shown as hex. 0011 upgrades a store in place without losing or changing a row.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { drizzle } from "drizzle-orm/better-sqlite3";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";
import { describe, expect, it } from "vitest";
import { CHAIN_GENESIS, chainLink } from "../../src/hash.ts";
import { beginBulkLoad, finishBulkLoad } from "../../src/store/bulkLoad.ts";
import { sqliteOf } from "../../src/store/connection.ts";
import { updateCoverageDigest, updateQuarantineDigest } from "../../src/store/digests.ts";
import { openStore } from "../../src/store/open.ts";
import { createRecordWriter } from "../../src/store/writes.ts";
import { prepareRecords } from "../../src/sync/prepareRecords.ts";
import { verifyStore } from "../../src/verify/store.ts";
import { makeRecord } from "../helpers/auditRecords.ts";

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
  "name",
  "raw",
  "record_hash",
  "tags",
  "time_text",
  "updated_by",
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
  ];
}

function documentedRows(sqlite: Database.Database) {
  return sqlite.prepare(`SELECT ${DOCUMENTED} FROM audit_logs ORDER BY seq`).all();
}

describe("audit_logs", () => {
  it("stores no copy of the fields it reads from the record, and reads the values the writer stored before", () => {
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
      createRecordWriter(store).writePage(records, { syncRunId: null, now: 1 });
      const prepared = prepareRecords(records);
      const rows = documentedRows(sqliteOf(store)) as Record<string, unknown>[];
      expect(rows).toHaveLength(3);
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
      expect(
        sqliteOf(store)
          .prepare("SELECT typeof(raw_data), length(record_hash_bytes) FROM audit_logs")
          .raw()
          .all(),
      ).toEqual([
        ["text", 32],
        ["text", 32],
        ["text", 32],
      ]);
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
      const record = makeRecord(AT);
      expect(writer.writePage([record], { syncRunId: null, now: 1 }).inserted).toBe(1);
      expect(writer.writePage([record], { syncRunId: null, now: 1 })).toMatchObject({
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

const MIGRATIONS = fileURLToPath(new URL("../../drizzle", import.meta.url));

/** A store file at migration 0010, filled by the writer of then (every column stored). */
function storeBefore0011(path: string, records: readonly unknown[]): void {
  const folder = join(mkdtempSync(join(tmpdir(), "flagtrail-0010-")), "drizzle");
  cpSync(MIGRATIONS, folder, { recursive: true });
  const journalPath = join(folder, "meta", "_journal.json");
  const journal = JSON.parse(readFileSync(journalPath, "utf8")) as { entries: { idx: number }[] };
  journal.entries = journal.entries.filter((e) => e.idx <= 10);
  writeFileSync(journalPath, JSON.stringify(journal));
  const sqlite = new Database(path);
  try {
    sqlite.pragma("foreign_keys = ON");
    migrate(drizzle(sqlite), { migrationsFolder: folder });
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
      sqlite.prepare("INSERT INTO listed_days (audit_log_id, day) VALUES (?, ?)").run(c.id, c.serverDay);
    }
    const meta = sqlite.prepare("INSERT INTO meta (key, value) VALUES (?, ?)");
    meta.run("chain_head_seq", String(records.length));
    meta.run("chain_head_hash", chain);
    // As every sync leaves them.
    updateQuarantineDigest(sqlite);
    updateCoverageDigest(sqlite);
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
      createRecordWriter(store).writePage([makeRecord(AT + 999_999)], { syncRunId: null, now: 1 });
      expect((await verifyStore(store)).records).toBe(records.length + 1);
    } finally {
      store.close();
    }
  });
});
