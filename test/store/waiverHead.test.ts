// The waiver register's head in meta (migration SQLite 0014): a store upgraded with waivers in it gets the
// head of the register as it stands, so `verify` passes on it and then sees rows removed from its end.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { nextWaiverRow } from "../../src/controls/waivers.ts";
import { readWaiverHead, type WaiverRow } from "../../src/store/controls/waivers.ts";
import { openStore } from "../../src/store/open.ts";
import { checkWaivers } from "../../src/verify/waivers.ts";
import { storeMigratedTo } from "../helpers/migrations.ts";

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
});
