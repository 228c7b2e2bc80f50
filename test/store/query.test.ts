// One query text on both engines (src/store/query.ts): the same `sql` template runs on a SQLite file and
// on the test run's PostgreSQL, binds values the same way and commits or rolls back a transaction alike.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type AnyStore, openAnyStore } from "../../src/store/openAny.ts";
import { inTransaction, queriesOf, sql } from "../../src/store/query.ts";
import { freshDatabase } from "../pg/cluster.ts";

const opened: AnyStore[] = [];
afterAll(async () => {
  for (const store of opened) await store.close();
});

const ENGINES = {
  sqlite: async () => join(mkdtempSync(join(tmpdir(), "flagtrail-query-")), "store.db"),
  postgres: () => freshDatabase("query"),
};

describe.each(Object.keys(ENGINES) as (keyof typeof ENGINES)[])("one query text on %s", (engine) => {
  async function store(): Promise<AnyStore> {
    const s = await openAnyStore(await ENGINES[engine]());
    opened.push(s);
    return s;
  }

  it("binds values, reads rows back as plain objects, counts changed rows", async () => {
    const s = await store();
    const q = await queriesOf(s);
    expect(q.dialect).toBe(engine);
    const key = "query-test's key; DROP TABLE meta; --";
    expect(await q.run(sql`INSERT INTO meta (key, value) VALUES (${key}, ${"v1"})`)).toBe(1);
    expect(await q.get(sql`SELECT key, value FROM meta WHERE key = ${key}`)).toEqual({ key, value: "v1" });
    const rows = await q.all<{ n: number }>(
      sql`SELECT count(*) AS n FROM meta WHERE key LIKE ${"query-test%"}`,
    );
    expect(rows).toEqual([{ n: 1 }]);
    expect(await q.get(sql`SELECT value FROM meta WHERE key = ${"absent"}`)).toBeUndefined();
  });

  it("commits a transaction that resolves and rolls back one that throws", async () => {
    const s = await store();
    await inTransaction(s, async (q) => {
      await q.run(sql`INSERT INTO meta (key, value) VALUES (${"kept"}, ${"1"})`);
    });
    await expect(
      inTransaction(s, async (q) => {
        await q.run(sql`INSERT INTO meta (key, value) VALUES (${"dropped"}, ${"1"})`);
        throw new Error("changed my mind");
      }),
    ).rejects.toThrow("changed my mind");
    const q = await queriesOf(s);
    const keys = await q.all<{ key: string }>(
      sql`SELECT key FROM meta WHERE key IN (${"kept"}, ${"dropped"})`,
    );
    expect(keys).toEqual([{ key: "kept" }]);
  });

  // PostgreSQL copies 32 rows or more (COPY FROM STDIN, text format) and inserts fewer with VALUES.
  it.each([40, 3])("inserts %i rows in order with every value as given (insertRows)", async (count) => {
    const s = await store();
    const q = await queriesOf(s);
    const tricky = [
      "back\\slash",
      "tab\there",
      "line\nbreak",
      "cr\rlf\r\n",
      "\\N",
      "\\.",
      "",
      "★ ünï",
      '"quoted", {}',
    ];
    const rows = Array.from({ length: count }, (_, i) => [
      i % 3 === 0 ? null : `record-${i}`,
      tricky[i % tricky.length],
      `hash-${i}`,
      tricky[(i + 4) % tricky.length],
      i % 2 === 0 ? null : "/path?a=1&b=2",
      1_700_000_000_000 + i,
      i % 5 === 0 ? null : i,
    ]);
    const columns = ["record_id", "raw", "raw_hash", "issues", "request_path", "received_at", "sync_run_id"];
    expect(await q.insertRows("quarantine", columns, rows)).toBe(count);
    const stored = await q.all<Record<string, unknown>>(
      sql`SELECT id, ${sql.raw(columns.join(", "))} FROM quarantine ORDER BY id`,
    );
    // Ids follow the rows' order; every value reads back unchanged, NULL as null.
    expect(stored.map((r) => r.id)).toEqual(rows.map((_, i) => i + 1));
    expect(stored.map((r) => columns.map((c) => r[c]))).toEqual(rows);
  });

  it("inserts values larger than PostgreSQL's 1 MiB COPY chunks, across chunk boundaries", async () => {
    const s = await store();
    const q = await queriesOf(s);
    // Multi-byte characters and escaped backslashes: the bytes on the wire outgrow the text's length.
    const raws = Array.from({ length: 40 }, (_, i) => `${i}:${"★\\é\t".repeat(i === 7 ? 400_000 : 9_000)}`);
    const rows = raws.map((raw, i) => [raw, `big-${i}`, "[]", 1]);
    expect(await q.insertRows("quarantine", ["raw", "raw_hash", "issues", "received_at"], rows)).toBe(40);
    const stored = await q.all<{ raw: string }>(sql`SELECT raw FROM quarantine ORDER BY id`);
    expect(stored.map((r) => r.raw)).toEqual(raws);
  });

  it("a refused insertRows rejects, and the store answers the next query", async () => {
    const s = await store();
    const q = await queriesOf(s);
    // The last row repeats the first one's raw_hash (unique).
    const rows = Array.from({ length: 40 }, (_, i) => ["{}", `dup-${i % 39}`, "[]", 1]);
    await expect(
      q.insertRows("quarantine", ["raw", "raw_hash", "issues", "received_at"], rows),
    ).rejects.toThrow(/unique|duplicate/i);
    expect(await q.get(sql`SELECT count(*) AS n FROM meta WHERE key = ${"absent"}`)).toEqual({ n: 0 });
  });

  it("two transactions begun together run one after the other", async () => {
    const s = await store();
    const order: string[] = [];
    const one = (name: string) =>
      inTransaction(s, async (q) => {
        order.push(`${name}:begin`);
        await q.run(sql`INSERT INTO meta (key, value) VALUES (${name}, ${"x"})`);
        await new Promise((resolve) => setImmediate(resolve));
        order.push(`${name}:end`);
      });
    await Promise.all([one("t1"), one("t2")]);
    expect(order.slice(0, 2)).toEqual(["t1:begin", "t1:end"]);
  });
});
