import { describe, expect, it } from "vitest";
import { CHAIN_GENESIS, chainLink, recordHash } from "../../src/hash.ts";
import { sqliteOf } from "../../src/store/connection.ts";
import { openStore } from "../../src/store/open.ts";
import { makeRecord } from "../helpers/auditRecords.ts";
import { createRecordWriter } from "../helpers/storeFixtures.ts";

const AT = Date.UTC(2024, 2, 10, 12, 0, 0);

function setup() {
  const store = openStore(":memory:");
  return { store, writer: createRecordWriter(store) };
}

describe("createRecordWriter.writePage", () => {
  it("stores records with parsed time, JSON columns, hash and a hash chain in insertion order", async () => {
    const { store, writer } = setup();
    const a = makeRecord(AT, { tags: ["prod"], changes: { rules: { old: [], new: [] } } });
    const b = makeRecord(AT + 1000, { modifierEmail: undefined });
    const result = await writer.writePage([a, b], { syncRunId: null, now: 42 });
    expect(result).toMatchObject({ fetched: 2, inserted: 2, duplicates: 0, mutations: 0, quarantined: 0 });

    const rows = sqliteOf(store).prepare("SELECT * FROM audit_logs ORDER BY seq").all() as Record<
      string,
      unknown
    >[];
    expect(rows.map((r) => r.id)).toEqual([a.id, b.id]);
    expect(rows[0]).toMatchObject({
      occurred_at: AT,
      server_day: "2024-03-10",
      tags: '["prod"]',
      changes: JSON.stringify(a.changes),
      raw: JSON.stringify(a),
      record_hash: recordHash(a),
      modifier_email: "ada@example.com",
      first_seen_at: 42,
      seq: 1,
    });
    expect(rows[1]?.modifier_email).toBeNull();
    const link1 = chainLink(CHAIN_GENESIS, recordHash(a));
    expect(rows[0]?.chain_hash).toBe(link1);
    expect(rows[1]?.chain_hash).toBe(chainLink(link1, recordHash(b)));
    const meta = Object.fromEntries(
      sqliteOf(store)
        .prepare("SELECT key, value FROM meta WHERE key LIKE 'chain_head%'")
        .all()
        .map((r) => [(r as { key: string }).key, (r as { value: string }).value]),
    );
    expect(meta).toEqual({ chain_head_seq: "2", chain_head_hash: rows[1]?.chain_hash });
  });

  it("stores an object modifierEmail as JSON text and keeps unknown fields in raw", async () => {
    const { store, writer } = setup();
    const record = { ...makeRecord(AT), modifierEmail: { email: "x@example.com" }, futureField: 7 };
    await writer.writePage([record], { syncRunId: null });
    const row = sqliteOf(store).prepare("SELECT modifier_email, raw FROM audit_logs").get() as {
      modifier_email: string;
      raw: string;
    };
    expect(JSON.parse(row.modifier_email)).toEqual({ email: "x@example.com" });
    expect(JSON.parse(row.raw).futureField).toBe(7);
  });

  it("deduplicates on id across and within pages", async () => {
    const { store, writer } = setup();
    const a = makeRecord(AT);
    await writer.writePage([a], { syncRunId: null });
    const result = await writer.writePage([a, makeRecord(AT), a], { syncRunId: null });
    expect(result).toMatchObject({ fetched: 3, inserted: 1, duplicates: 2 });
    expect(sqliteOf(store).prepare("SELECT count(*) FROM audit_logs").pluck().get()).toBe(2);
  });

  it("keeps the first version of a changed record and files the new one as a revision", async () => {
    const { store, writer } = setup();
    const first = makeRecord(AT, { changeLog: "original" });
    await writer.writePage([first], { syncRunId: null });
    const changed = { ...first, changeLog: "rewritten" };
    expect(await writer.writePage([changed], { syncRunId: null })).toMatchObject({
      mutations: 1,
      inserted: 0,
    });
    // Seeing the same changed version again is not a second mutation.
    expect(await writer.writePage([changed], { syncRunId: null })).toMatchObject({
      mutations: 0,
      duplicates: 1,
    });
    expect(sqliteOf(store).prepare("SELECT change_log FROM audit_logs").pluck().get()).toBe("original");
    const revisions = sqliteOf(store)
      .prepare("SELECT audit_log_id, raw, record_hash FROM audit_log_revisions")
      .all();
    expect(revisions).toEqual([
      { audit_log_id: first.id, raw: JSON.stringify(changed), record_hash: recordHash(changed) },
    ]);
  });

  it("quarantines an invalid record with its raw JSON and every issue, and goes on", async () => {
    const { store, writer } = setup();
    const bad = { id: "bad0000000000000000001", name: 5, date: "Mon Sep 26 2022" };
    const good = makeRecord(AT);
    const result = await writer.writePage([bad, good], {
      syncRunId: null,
      requestPath: "/console/v1/audit_logs?page=1",
    });
    expect(result).toMatchObject({ fetched: 2, inserted: 1, quarantined: 1 });
    const row = sqliteOf(store).prepare("SELECT * FROM quarantine").get() as Record<string, string>;
    expect(row.record_id).toBe(bad.id);
    expect(JSON.parse(row.raw as string)).toEqual(bad);
    expect(row.request_path).toBe("/console/v1/audit_logs?page=1");
    const paths = (JSON.parse(row.issues as string) as { path: string[] }[]).map((i) => i.path.join("."));
    expect(paths).toEqual(expect.arrayContaining(["name", "actionType", "time"]));
    // The same invalid record again is not quarantined twice.
    expect(await writer.writePage([bad], { syncRunId: null })).toMatchObject({
      quarantined: 0,
      duplicates: 1,
    });
  });

  it("stores an unparseable date/time with occurred_at NULL and counts a warning", async () => {
    const { store, writer } = setup();
    const odd = makeRecord(AT, { date: "sometime", time: "later" });
    const result = await writer.writePage([odd], { syncRunId: null });
    expect(result.warnings).toBe(1);
    expect(result.warningMessages[0]).toContain(odd.id);
    const row = sqliteOf(store).prepare("SELECT occurred_at, server_day, date_text FROM audit_logs").get();
    expect(row).toEqual({ occurred_at: null, server_day: null, date_text: "sometime" });
  });

  it("rolls back the whole page and its progress when the transaction fails", async () => {
    const { store, writer } = setup();
    await writer.writePage([makeRecord(AT)], { syncRunId: null });
    const before = writer.chainHead();
    await expect(
      writer.writePage([makeRecord(AT), makeRecord(AT)], { syncRunId: null }, () => {
        sqliteOf(store)
          .prepare("INSERT INTO checkpoints (filter_key, latest_id, updated_at) VALUES ('all', 'x', 1)")
          .run();
        throw new Error("disk full");
      }),
    ).rejects.toThrow("disk full");
    expect(sqliteOf(store).prepare("SELECT count(*) FROM audit_logs").pluck().get()).toBe(1);
    expect(sqliteOf(store).prepare("SELECT count(*) FROM checkpoints").pluck().get()).toBe(0);
    expect(writer.chainHead()).toEqual(before);
    expect(sqliteOf(store).prepare("SELECT value FROM meta WHERE key = 'chain_head_seq'").pluck().get()).toBe(
      "1",
    );
  });
});
