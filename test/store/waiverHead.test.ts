// The waiver register's head in meta (migration SQLite 0014): a store upgraded with waivers in it gets the
// head of the register as it stands, so `verify` passes on it and then sees rows removed from its end.
// verify reads the rows and the head from one snapshot, on both engines: a waive another connection
// commits between its two reads (a hook on the head's read commits it then) is not taken for a changed end.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { describe, expect, it, vi } from "vitest";
import { nextWaiverRow } from "../../src/controls/waivers.ts";
import { sqliteOf } from "../../src/store/connection.ts";
import {
  appendWaiver,
  readWaiverHead,
  WAIVER_CHAIN_HEAD_KEY,
  type WaiverRow,
} from "../../src/store/controls/waivers.ts";
import { openStore } from "../../src/store/open.ts";
import { openAnyStore } from "../../src/store/openAny.ts";
import { checkWaivers } from "../../src/verify/waivers.ts";
import { storeMigratedTo } from "../helpers/migrations.ts";
import { freshDatabase } from "../pg/cluster.ts";

/** The n-th waive of the register, after `previous` (null for the first). */
const entry = (previous: { seq: number; chain_hash: string } | null, n: number) =>
  nextWaiverRow(previous, {
    finding_id: `sa:rec${n}`,
    action: "waive",
    reason: "accepted",
    by_name: "Dana Lee",
    expires: null,
    created_at: 1_700_000_000_000 + n,
  });

describe("the waiver register's head", () => {
  it("is recorded for a register written before it was kept, and anchors its end", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "flagtrail-waiver-head-")), "old.db");
    const old = storeMigratedTo(path, 13);
    const rows: WaiverRow[] = [];
    for (const action of ["waive", "unwaive"] as const) {
      const row = nextWaiverRow(rows.at(-1) ?? null, {
        finding_id: "sa:rec1",
        action,
        reason: action === "waive" ? "accepted" : "withdrawn",
        by_name: "Dana Lee",
        expires: null,
        created_at: 1_700_000_000_000 + rows.length,
      });
      old
        .prepare(
          `INSERT INTO control_waivers (seq, finding_id, action, reason, by_name, expires, created_at, hash, chain_hash)
           VALUES (@seq, @finding_id, @action, @reason, @by_name, @expires, @created_at, @hash, @chain_hash)`,
        )
        .run(row);
      rows.push(row);
    }
    old.close();

    const store = openStore(path);
    try {
      expect(JSON.parse((await readWaiverHead(store)) ?? "null")).toEqual({
        seq: 2,
        hash: rows[1]!.chain_hash,
      });
      expect(await checkWaivers(store)).toBe(2);
    } finally {
      store.close();
    }
    // The withdrawal deleted behind flagtrail's back: the waiver would be in force again.
    const raw = new Database(path);
    raw.prepare("DELETE FROM control_waivers WHERE seq = 2").run();
    raw.close();
    const tampered = openStore(path, { readonly: true });
    try {
      await expect(checkWaivers(tampered)).rejects.toThrow(
        /head recorded in meta .* is not its last row \(seq 1\)/,
      );
    } finally {
      tampered.close();
    }
  });

  it("verify reads the rows and the head from one snapshot: a waive committed between the two reads is not a removed tail", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "flagtrail-waiver-snapshot-")), "s.db");
    const store = openStore(path);
    const first = await appendWaiver(store, (previous) => entry(previous, 1));
    // The hook: once verify has read the rows and asks meta for the head, another process commits a
    // waive (its row and the head, as appendWaiver does) before the head is read.
    const other = new Database(path);
    const second = entry(first, 2);
    const commitWaive = other.transaction(() => {
      other
        .prepare(
          `INSERT INTO control_waivers (seq, finding_id, action, reason, by_name, expires, created_at, hash, chain_hash)
           VALUES (@seq, @finding_id, @action, @reason, @by_name, @expires, @created_at, @hash, @chain_hash)`,
        )
        .run(second);
      other
        .prepare("UPDATE meta SET value = ? WHERE key = ?")
        .run(JSON.stringify({ seq: second.seq, hash: second.chain_hash }), WAIVER_CHAIN_HEAD_KEY);
    });
    const statement = Object.getPrototypeOf(sqliteOf(store).prepare("SELECT 1")) as {
      get: (...args: unknown[]) => unknown;
    };
    const original = statement.get;
    let committed = false;
    const get = vi.spyOn(statement, "get").mockImplementation(function (this: { source: string }, ...args) {
      if (!committed && this.source.includes("FROM meta WHERE key") && args[0] === WAIVER_CHAIN_HEAD_KEY) {
        committed = true;
        commitWaive();
      }
      return original.apply(this, args);
    });
    try {
      // As of the snapshot: one row, its head; the waive committed meanwhile is not seen at all.
      expect(await checkWaivers(store)).toBe(1);
      expect(committed).toBe(true);
    } finally {
      get.mockRestore();
      other.close();
    }
    expect(await checkWaivers(store)).toBe(2);
    store.close();
  });

  it("PostgreSQL: verify reads the rows and the head from one snapshot: a waive committed between the two reads is not a removed tail", async () => {
    const url = await freshDatabase("waiver_snapshot");
    const store = await openAnyStore(url);
    // Another run's store: its own pool, so its waive commits from a session of its own.
    const other = await openAnyStore(url);
    const query = pg.Client.prototype.query;
    let committed = false;
    try {
      const first = await appendWaiver(store, (previous) => entry(previous, 1));
      // The hook: once verify has read the rows and sends its read of the head, another session commits a
      // waive (appendWaiver: its row and the head in one transaction) before that read is sent.
      pg.Client.prototype.query = async function (this: pg.Client, ...args: unknown[]) {
        const [text, values] = args as [unknown, unknown];
        const asksHead =
          typeof text === "string" &&
          text.includes("FROM meta WHERE key") &&
          Array.isArray(values) &&
          values[0] === WAIVER_CHAIN_HEAD_KEY;
        if (!committed && asksHead) {
          committed = true;
          await appendWaiver(other, () => entry(first, 2));
        }
        return (query as (...a: unknown[]) => unknown).apply(this, args);
      } as typeof query;
      // As of the snapshot: one row, its head; the waive committed meanwhile is not seen at all.
      expect(await checkWaivers(store)).toBe(1);
      expect(committed).toBe(true);
      pg.Client.prototype.query = query;
      expect(await checkWaivers(store)).toBe(2);
    } finally {
      pg.Client.prototype.query = query;
      await other.close();
      await store.close();
    }
  });
});
